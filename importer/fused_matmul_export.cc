#include "importer/fused_matmul_export.h"

#include <numeric>
#include <string>
#include <vector>

namespace attune {

absl::Status LowerFusedMatMulForOnnx(Graph& graph) {
  for (Node* node : graph.nodes()) {
    if (node->domain() != "attune" || node->op_type() != "FusedMatMul") continue;
    auto trans_b = node->attributes().GetInt("trans_b", 0);
    Value* a = node->input(0);
    Value* b = node->input(1);
    if (!trans_b.ok() || a == nullptr || b == nullptr) continue;
    Value* operand = b;
    if (*trans_b != 0) {
      if (!b->shape() || b->shape()->size() < 2) continue;
      std::vector<int64_t> perm(b->shape()->size());
      std::iota(perm.begin(), perm.end(), 0);
      std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
      SymbolicShape shape = *b->shape();
      std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
      operand = graph.AddValue(node->name() + "/transposed_b", b->type(), shape);
      Attributes attrs;
      attrs.Set("perm", perm);
      graph.AddNode("Transpose", "", graph.UniqueName(node->name() + "/Transpose"), {b}, {operand}, std::move(attrs));
    }
    graph.ReplaceNode(node, "MatMul", "", {a, operand});
  }
  // Nothing of Attune's own left: the model imports no attune domain.
  bool attune_left = false;
  for (const Node* node : graph.nodes()) attune_left |= node->domain() == "attune";
  if (!attune_left) graph.RemoveOpset("attune");
  return absl::OkStatus();
}

}  // namespace attune
