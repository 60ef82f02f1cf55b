#include "engine/passes/shape_analysis.h"

#include "absl/strings/match.h"
#include "core/common/status_macros.h"
#include "engine/passes/shape_rules/rules.h"
#include "ops/run_node.h"

namespace attune {

bool IsFreshSymbol(const Dim& dim) { return dim.is_symbol() && absl::StartsWith(dim.symbol(), "unk__"); }

std::optional<SymbolicShape> MergeShapes(const std::optional<SymbolicShape>& current,
                                         const std::optional<SymbolicShape>& inferred) {
  if (!current) return inferred;
  if (!inferred || inferred->size() != current->size()) return current;
  SymbolicShape merged = *current;
  for (size_t i = 0; i < merged.size(); ++i) {
    const Dim& now = merged[i];
    const Dim& found = (*inferred)[i];
    if (now.is_known()) continue;
    // A symbol the model declares for a value a node computes (a graph
    // output's or value_info's dim_param) is a claim nothing checks at run
    // time: a dim inferred from the inputs wins over it. Exporters name a
    // present KV cache "total_seq" like the attention_mask input's length,
    // which a run may set apart.
    if (found.is_known() || now.is_unknown() || (found.is_symbol() && !IsFreshSymbol(found)))
      merged[i] = found;
  }
  return merged;
}

bool SameShape(const std::optional<SymbolicShape>& a, const std::optional<SymbolicShape>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->size() != b->size()) return false;
  for (size_t i = 0; i < a->size(); ++i)
    if ((*a)[i].ToString() != (*b)[i].ToString()) return false;
  return true;
}

const ValueFacts& ShapeAnalysis::facts(const Value* value) const {
  static const ValueFacts kNone;
  auto it = facts_.find(value);
  return it == facts_.end() ? kNone : it->second;
}

absl::StatusOr<ShapeAnalysis> ShapeAnalysis::Run(const Graph& graph) {
  ShapeAnalysis analysis;
  auto facts_of = [&](const Value* v) -> const ValueFacts* {
    auto it = analysis.facts_.find(v);
    if (it != analysis.facts_.end()) return &it->second;
    ValueFacts f;
    if (v->constant() != nullptr) {  // a released constant keeps its type and shape
      f = FactsOfConstant(*v->constant());
    } else {
      f.type = v->type();
      f.shape = v->shape();
    }
    return &analysis.facts_.emplace(v, std::move(f)).first->second;
  };
  ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
  for (const Node* node : order) {
    std::vector<const ValueFacts*> inputs;
    for (const Value* in : node->inputs()) inputs.push_back(in != nullptr ? facts_of(in) : nullptr);
    auto inferred = InferNodeFacts(*node, KernelOpsetFor(graph, *node), std::move(inputs));
    for (int o = 0; o < node->num_outputs(); ++o) {
      const Value* out = node->output(o);
      if (out == nullptr || out->is_constant()) continue;
      ValueFacts f;
      f.type = out->type();
      f.shape = out->shape();
      if (inferred) {
        const ValueFacts& found = (*inferred)[o];
        if (f.type == ElementType::kUndefined) f.type = found.type;
        f.shape = MergeShapes(f.shape, found.shape);
        if (found.data && shape_rules::MayTrackData(f.type, f.shape) &&
            static_cast<int64_t>(found.data->size()) == shape_rules::StaticElementCount(f.shape))
          f.data = found.data;
        f.integer_before_cast = found.integer_before_cast;
      }
      analysis.facts_[out] = std::move(f);
    }
  }
  return analysis;
}

}  // namespace attune
