#include "engine/passes/passes.h"

namespace attune {
namespace {

class ConstantFoldingPass final : public Pass {
 public:
  std::string_view name() const override { return "constant_folding"; }
  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override { return false; }
};

}  // namespace

std::unique_ptr<Pass> MakeConstantFoldingPass() { return std::make_unique<ConstantFoldingPass>(); }

}  // namespace attune
