// Moves a constant scale that follows a Where mask onto the Where's branches:
//   Div(Where(c, s, F), k) = Where(c, Div(s, k), Div(F, k))
//   Mul(Where(c, s, F), k) = Where(c, Mul(s, k), Mul(F, k))   (either operand order)
// with F and k constants (the fill's product folds on the next round).
// GPT-J and CodeGen mask the raw scores, then divide by √D, then add the
// padding mask: after this rewrite their chain reads scale, Where, Add, the
// order GPT-2 writes and the attention patterns match (causal + padding).
//
// Exact, element for element: every output element is c ? s·k : F·k computed
// with the same operation on the same two values as (c ? s : F)·k, NaN and Inf
// included, and broadcasting is associative, so the output shape (and any
// broadcast error) is the same. The Where must have no other reader, so no
// score tensor is computed twice. The fill must stay one that hides its keys
// after the scale (finfo.min / √D does; −1e4 / √D does not, and a mask
// before the scale with nothing after it is a form the patterns take as is).
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "engine/passes/attention/attention_rule.h"
#include "engine/passes/passes.h"
#include "engine/pattern/constants.h"

namespace attune {
namespace {

bool IsDefault(const Node& node, const char* op) { return node.op_type() == op && node.domain().empty(); }

// The Where a Div or Mul node scales, when its other operand is a constant.
struct ScaledWhere {
  Node* where;
  Value* scale;
  bool where_first;  // Where(..) op k (always so for Div)
};

std::optional<ScaledWhere> Match(const Node& node) {
  const bool is_div = IsDefault(node, "Div");
  if ((!is_div && !IsDefault(node, "Mul")) || node.num_inputs() != 2 || node.num_outputs() != 1) return std::nullopt;
  for (int i = 0; i < (is_div ? 1 : 2); ++i) {
    Value* masked = node.input(i);
    Value* scale = node.input(1 - i);
    if (masked == nullptr || scale == nullptr || scale->constant() == nullptr) continue;
    Node* where = masked->producer();
    if (where == nullptr || !IsDefault(*where, "Where") || where->num_inputs() != 3) continue;
    if (masked->uses().size() != 1 || masked->is_graph_output()) continue;
    if (masked->type() == ElementType::kUndefined || masked->type() != scale->type()) continue;
    Value* a = where->input(1);
    Value* b = where->input(2);
    if (a == nullptr || b == nullptr || where->input(0) == nullptr) continue;
    // Exactly one branch is the constant fill; the other is what the mask keeps.
    if ((a->constant() != nullptr) == (b->constant() != nullptr)) continue;
    auto fill = pattern::UniformValue(*(a->constant() != nullptr ? a : b)->constant());
    auto k = pattern::UniformValue(*scale->constant());
    if (!fill || !k) continue;
    const double scaled_fill = is_div ? *fill / *k : *fill * *k;
    if (!(scaled_fill <= attention::kHidingFill)) continue;
    return ScaledWhere{where, scale, i == 0};
  }
  return std::nullopt;
}

class ScaleBeforeMaskPass final : public Pass {
 public:
  std::string_view name() const override { return "scale_before_mask"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext&) override {
    bool changed = false;
    for (Node* node : graph.nodes()) {
      auto m = Match(*node);
      if (!m) continue;
      const std::string op = node->op_type();
      auto scaled = [&](Value* branch) {
        Value* out = graph.AddValue(absl::StrCat(branch->name(), "_scaled"), branch->type());
        std::vector<Value*> inputs = m->where_first ? std::vector<Value*>{branch, m->scale}
                                                    : std::vector<Value*>{m->scale, branch};
        graph.AddNode(op, "", graph.UniqueName(absl::StrCat(node->name(), "_", branch->name())), std::move(inputs),
                      {out});
        return out;
      };
      Value* cond = m->where->input(0);
      Value* keep = scaled(m->where->input(1));
      Value* fill = scaled(m->where->input(2));
      // The scale's node becomes the Where: its output keeps its name and readers.
      graph.ReplaceNode(node, "Where", "", {cond, keep, fill});
      changed = true;
    }
    if (changed) graph.RemoveDeadNodes();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeScaleBeforeMaskPass() { return std::make_unique<ScaleBeforeMaskPass>(); }

}  // namespace attune
