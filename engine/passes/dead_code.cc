#include "engine/passes/passes.h"

namespace attune {
namespace {

class DeadCodePass final : public Pass {
 public:
  std::string_view name() const override { return "dead_code"; }
  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override { return graph.RemoveDeadNodes() > 0; }
};

}  // namespace

std::unique_ptr<Pass> MakeDeadCodePass() { return std::make_unique<DeadCodePass>(); }

}  // namespace attune
