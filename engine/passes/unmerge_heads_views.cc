#include "engine/passes/unmerge_heads_views.h"

#include "engine/passes/graph_edits.h"
#include "engine/passes/symbolic_dim.h"
#include "engine/pattern/constants.h"

namespace attune::unmerge_heads {

std::optional<SeqFirstView> FindSequenceFirstView(const Node& transpose) {
  if (!IsOp(&transpose, "Transpose") || transpose.num_inputs() != 1) return std::nullopt;
  auto perm = transpose.attributes().GetInts("perm");
  if (!perm.ok()) return std::nullopt;
  std::vector<int64_t> perm4;
  if (*perm == std::vector<int64_t>{1, 0, 2}) {
    perm4 = {1, 2, 0, 3};
  } else if (*perm == std::vector<int64_t>{1, 2, 0}) {
    perm4 = {1, 2, 3, 0};
  } else {
    return std::nullopt;
  }
  const Node* view = transpose.input(0) != nullptr ? transpose.input(0)->producer() : nullptr;
  if (!IsOp(view, "Reshape")) return std::nullopt;
  const SymbolicShape* out = ShapeOfRank(view->output(0), 3);
  Value* projection = view->input(0);
  // The projection (L, B, E), or already split into heads (L, B, H, D) (Megatron).
  const SymbolicShape* in = ShapeOfRank(projection, 3);
  const SymbolicShape* split = ShapeOfRank(projection, 4);
  if (out == nullptr || !(*out)[2].is_known()) return std::nullopt;
  const int64_t head_dim = (*out)[2].value();
  int64_t heads = 0;
  if (in != nullptr && (*in)[2].is_known()) {
    const int64_t hidden = (*in)[2].value();
    if (head_dim <= 0 || hidden <= 0 || hidden % head_dim != 0) return std::nullopt;
    heads = hidden / head_dim;
  } else if (split != nullptr && (*split)[2].is_known() && (*split)[3] == (*out)[2]) {
    in = split;
    heads = (*split)[2].value();
  }
  if (heads <= 0 || head_dim <= 0) return std::nullopt;
  // Same sequence, and the merged dim proven (B, H) of the projection's B.
  if ((*in)[0].is_unknown() || !((*in)[0] == (*out)[0]) || (*in)[1].is_unknown() ||
      !((*out)[1] == DimMul((*in)[1], Dim::Known(heads))))
    return std::nullopt;
  return SeqFirstView{projection, heads, head_dim, std::move(perm4), (*in)[1]};
}

std::optional<Heads> SequenceFirstSplitHeads(const Node& split) {
  if (!IsOp(&split, "Transpose") || split.num_outputs() != 1 || split.num_inputs() != 1) return std::nullopt;
  auto perm = split.attributes().GetInts("perm");
  if (!perm.ok() || *perm != std::vector<int64_t>{1, 0, 2}) return std::nullopt;
  const SymbolicShape* in = ShapeOfRank(split.input(0), 3);
  const Node* product = split.input(0) != nullptr ? split.input(0)->producer() : nullptr;
  if (in == nullptr || ShapeOfRank(split.output(0), 3) == nullptr || !IsOp(product, "MatMul") ||
      product->num_inputs() != 2 || product->input(1) == nullptr || product->input(1)->producer() == nullptr)
    return std::nullopt;
  auto values = FindSequenceFirstView(*product->input(1)->producer());
  if (!values) return std::nullopt;
  Heads heads{values->batch, Dim::Known(values->heads), DimMul(values->batch, Dim::Known(values->heads))};
  if (!((*in)[0] == heads.merged)) return std::nullopt;
  return heads;
}

Value* AddTranspose(Graph& graph, Value* input, const std::vector<int64_t>& perm, const std::string& name) {
  const SymbolicShape& in = *input->shape();
  SymbolicShape shape;
  for (int64_t p : perm) shape.push_back(in[p]);
  Value* out = graph.AddValue(name, input->type(), std::move(shape));
  Attributes attrs;
  attrs.Set("perm", perm);
  graph.AddNode("Transpose", "", graph.UniqueName(name), {input}, {out}, std::move(attrs));
  return out;
}

// Transpose(Reshape(projection, [0, 0, H, D]), perm4): the 4-D heads a
// sequence-first view merges (the target copies L and B, allowzero 0).
Value* SequenceFirstHeads(Graph& graph, const SeqFirstView& view) {
  const std::string base = view.projection->name() + "/heads";
  if (view.projection->shape()->size() == 4) return AddTranspose(graph, view.projection, view.perm4, base + "_transposed");
  const SymbolicShape& in = *view.projection->shape();
  Value* target = graph.AddConstant(base + "_target", Int64Vector({0, 0, view.heads, view.head_dim}));
  Value* split = graph.AddValue(base, view.projection->type(),
                                SymbolicShape{in[0], in[1], Dim::Known(view.heads), Dim::Known(view.head_dim)});
  graph.AddNode("Reshape", "", graph.UniqueName(base), {view.projection, target}, {split});
  return AddTranspose(graph, split, view.perm4, base + "_transposed");
}

// The sequence-first split's result from the 4-D (B, H, T, Dv):
// Transpose(·, (2, 0, 1, 3)) viewed as (T, B*H, Dv), the three dims read
// at run time, so that every size (zero included) views as the 3-D one did.
Value* SequenceFirstOutput(Graph& graph, Value* result4, const Value& split_output) {
  const std::string base = split_output.name() + "/unmerged";
  Value* t4 = AddTranspose(graph, result4, {2, 0, 1, 3}, base + "_sequence_first");
  Value* shape = graph.AddValue(base + "_shape", ElementType::kInt64, SymbolicShape{Dim::Known(4)});
  graph.AddNode("Shape", "", graph.UniqueName(base + "_shape"), {t4}, {shape});
  auto dims = [&](const std::vector<int64_t>& which, const std::string& name) {
    Value* at = graph.AddConstant(name + "_index", Int64Vector(which));
    Value* out = graph.AddValue(name, ElementType::kInt64, SymbolicShape{Dim::Known(static_cast<int64_t>(which.size()))});
    Attributes gather;
    gather.Set("axis", int64_t{0});
    graph.AddNode("Gather", "", graph.UniqueName(name), {shape, at}, {out}, std::move(gather));
    return out;
  };
  Value* rows = dims({0}, base + "_rows");
  Value* batch = dims({1}, base + "_batch");
  Value* heads = dims({2}, base + "_heads");
  Value* size = dims({3}, base + "_size");
  Value* merged = graph.AddValue(base + "_merged", ElementType::kInt64, SymbolicShape{Dim::Known(1)});
  graph.AddNode("Mul", "", graph.UniqueName(base + "_merged"), {batch, heads}, {merged});
  Value* target = graph.AddValue(base + "_target", ElementType::kInt64, SymbolicShape{Dim::Known(3)});
  Attributes concat;
  concat.Set("axis", int64_t{0});
  graph.AddNode("Concat", "", graph.UniqueName(base + "_target"), {rows, merged, size}, {target}, std::move(concat));
  Value* out = graph.AddValue(base, split_output.type(), *split_output.shape());
  graph.AddNode("Reshape", "", graph.UniqueName(base), {t4, target}, {out});
  return out;
}

}  // namespace attune::unmerge_heads
