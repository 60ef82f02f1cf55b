// MatMul(A, Transpose(B)) with a Transpose that only swaps B's last two axes
// becomes attune.FusedMatMul(A, B, trans_b = 1): the product reads B through
// strides instead of a transposed copy made on every run. This is the lm_head
// of a tied embedding (MatMul(h, Transpose(wte)): 150 MB copied per token in
// GPT-2) and the K·ᵀ of attention that stays unfused. The Transpose stays only
// if something else reads its output.
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/passes.h"
#include "engine/pattern/pattern.h"

namespace attune {
namespace {

using pattern::Capture;
using pattern::Op;

// A perm that is the identity except for its last two entries, swapped.
std::optional<std::string> SwapsLastTwoAxes(const Node& node, const pattern::Match&) {
  auto perm = node.attributes().GetInts("perm");
  if (!perm.ok()) return "Transpose without a perm reverses every axis";
  const int64_t rank = static_cast<int64_t>(perm->size());
  if (rank < 2) return "perm of rank below 2";
  const Value* in = node.input(0);
  if (in == nullptr || !in->shape() || static_cast<int64_t>(in->shape()->size()) != rank)
    return "perm does not match the input's rank";
  for (int64_t i = 0; i + 2 < rank; ++i)
    if ((*perm)[i] != i) return "perm moves a batch axis";
  if ((*perm)[rank - 2] != rank - 1 || (*perm)[rank - 1] != rank - 2) return "perm does not swap the last two axes";
  return std::nullopt;
}

const pattern::Pattern& TransposedBProduct() {
  static const auto* p = new pattern::Pattern(
      Op("MatMul").Inputs({Capture("a"), Op("Transpose").Check(SwapsLastTwoAxes).Inputs({Capture("b")})}));
  return *p;
}

class TransposedMatMulPass final : public Pass {
 public:
  std::string_view name() const override { return "transposed_matmul"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext&) override {
    bool changed = false;
    for (Node* node : graph.nodes()) {
      if (node->op_type() != "MatMul" || !node->domain().empty() || node->num_inputs() != 2) continue;
      const pattern::MatchResult r = pattern::MatchValue(TransposedBProduct(), node->output(0));
      if (!r.matched) continue;
      Value* a = r.match.mutable_value("a");
      Value* b = r.match.mutable_value("b");
      Attributes attrs;
      attrs.Set("trans_b", int64_t{1});
      graph.ReplaceNode(node, "FusedMatMul", "attune", {a, b}, std::move(attrs));
      changed = true;
    }
    if (changed) {
      if (graph.OpsetFor("attune") == 0) graph.SetOpset("attune", 1);
      graph.RemoveDeadNodes();
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeTransposedMatMulPass() { return std::make_unique<TransposedMatMulPass>(); }

}  // namespace attune
