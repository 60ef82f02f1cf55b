#include "engine/passes/passes.h"

namespace attune {
namespace {

class CommonSubexpressionPass final : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override { return false; }
};

}  // namespace

std::unique_ptr<Pass> MakeCommonSubexpressionPass() { return std::make_unique<CommonSubexpressionPass>(); }

}  // namespace attune
