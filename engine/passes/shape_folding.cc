#include "engine/passes/passes.h"

namespace attune {
namespace {

class ShapeFoldingPass final : public Pass {
 public:
  std::string_view name() const override { return "shape_folding"; }
  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override { return false; }
};

}  // namespace

std::unique_ptr<Pass> MakeShapeFoldingPass() { return std::make_unique<ShapeFoldingPass>(); }

}  // namespace attune
