#include "engine/passes/passes.h"

namespace attune {
namespace {

class ShapeInferencePass final : public Pass {
 public:
  std::string_view name() const override { return "shape_inference"; }
  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override { return false; }
};

}  // namespace

std::unique_ptr<Pass> MakeShapeInferencePass() { return std::make_unique<ShapeInferencePass>(); }

}  // namespace attune
