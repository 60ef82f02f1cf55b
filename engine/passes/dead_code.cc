// Dead-code elimination: no-op nodes (Identity, inference-mode Dropout, a Cast
// to the type it already has) are bypassed, then nodes whose outputs nobody
// needs are removed. Bypassing no-ops here means the fusion patterns never
// need optional Identity/Dropout wrappers.
#include "engine/passes/passes.h"

namespace attune {
namespace {

// Dropout is the identity unless training_mode is given and not a constant false.
bool IsInferenceDropout(const Node& node) {
  const Value* mode = node.input(2);
  if (mode == nullptr) return true;
  const Tensor* t = mode->constant();
  return t != nullptr && t->type() == ElementType::kBool && t->num_elements() == 1 && !*t->data<bool>();
}

// The input a no-op node passes through unchanged, or nullptr.
Value* PassThroughInput(const Node& node) {
  if (!node.domain().empty() || node.num_inputs() < 1 || node.input(0) == nullptr) return nullptr;
  Value* in = node.input(0);
  const std::string& op = node.op_type();
  if (op == "Identity") return in;
  if (op == "Dropout") {
    // The optional mask output must be unused.
    const Value* mask = node.output(1);
    if (mask != nullptr && (!mask->uses().empty() || mask->is_graph_output())) return nullptr;
    return IsInferenceDropout(node) ? in : nullptr;
  }
  if (op == "Cast") {
    auto to = node.attributes().GetInt("to");
    return to.ok() && in->type() != ElementType::kUndefined && static_cast<ElementType>(*to) == in->type() ? in
                                                                                                             : nullptr;
  }
  return nullptr;
}

class DeadCodePass final : public Pass {
 public:
  std::string_view name() const override { return "dead_code"; }
  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    bool changed = false;
    for (Node* node : graph.nodes()) {
      Value* out = node->output(0);
      Value* in = PassThroughInput(*node);
      // A graph output keeps its producer: forwarding would rename the output.
      if (in == nullptr || out == nullptr || out->is_graph_output() || out->uses().empty()) continue;
      graph.ReplaceAllUsesWith(out, in);
      changed = true;
    }
    return graph.RemoveDeadNodes() > 0 || changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeDeadCodePass() { return std::make_unique<DeadCodePass>(); }

}  // namespace attune
