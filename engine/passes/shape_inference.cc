// Shape inference: writes the element types and symbolic shapes that the
// shape analysis finds into the graph's values.
#include "core/common/status_macros.h"
#include "engine/passes/passes.h"
#include "engine/passes/shape_analysis.h"

namespace attune {
namespace {

class ShapeInferencePass final : public Pass {
 public:
  std::string_view name() const override { return "shape_inference"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    ASSIGN_OR_RETURN(ShapeAnalysis analysis, ShapeAnalysis::Run(graph));
    bool changed = false;
    for (Node* node : graph.nodes()) {
      for (Value* out : node->outputs()) {
        if (out == nullptr || out->is_constant()) continue;
        const ValueFacts& f = analysis.facts(out);
        if (out->type() == ElementType::kUndefined && f.type != ElementType::kUndefined) {
          out->set_type(f.type);
          changed = true;
        }
        if (!SameShape(out->shape(), f.shape)) {
          out->set_shape(f.shape);
          changed = true;
        }
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeShapeInferencePass() { return std::make_unique<ShapeInferencePass>(); }

}  // namespace attune
