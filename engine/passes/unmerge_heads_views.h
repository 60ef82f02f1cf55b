// Shared by the unmerge_heads pass: the (B, H) of a merged region, and the
// sequence-first views of PyTorch's nn.MultiheadAttention.
//
// PyTorch's nn.MultiheadAttention (and the nn.Transformer layers built on it)
// keeps the sequence first: it views its (L, B, E) projections as
// (L, B*H, D) and transposes them to (B*H, L, D) (or (B*H, D, L) for the keys
// of the scores), and its output (B*H, T, D) goes back through a Transpose
// (1, 0, 2) to (T, B*H, D). Such a view is a merge too, of the 4-D
// Transpose(Reshape(P, [0, 0, H, D]), (1, 2, 0, 3)): element (l, b*H + h, d)
// of the view is element (l, b, h*D + d) of P, with H = E / D proven from the
// constant sizes E and D and the view's merged dim proven B*H. The Transpose
// of the output is a split: its result is the 4-D (B, H, T, D) transposed to
// (T, B, H, D) and viewed as (T, B*H, D), its dims read at run time. Where
// (the merged key padding of nn.MultiheadAttention) lifts like the binary
// ops, each operand lifted or broadcast along the merged axis.
#ifndef ATTUNE_ENGINE_PASSES_UNMERGE_HEADS_VIEWS_H_
#define ATTUNE_ENGINE_PASSES_UNMERGE_HEADS_VIEWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/graph.h"

namespace attune::unmerge_heads {

// The (B, H) a region is split into.
struct Heads {
  Dim batch;
  Dim heads;
  Dim merged;  // B*H
};

inline const SymbolicShape* ShapeOfRank(const Value* v, size_t rank) {
  if (v == nullptr || !v->shape() || v->shape()->size() != rank) return nullptr;
  return &*v->shape();
}

inline bool IsOp(const Node* n, std::string_view op) { return n != nullptr && n->domain().empty() && n->op_type() == op; }

// A sequence-first head view: `node` = Transpose(Reshape(projection (L, B, E)
// -> (L, B*H, D)), perm (1, 0, 2) or (1, 2, 0)), the merge of
// Transpose(Reshape(projection, [0, 0, H, D]), perm4); or of a projection
// already (L, B, H, D), the merge of Transpose(projection, perm4).
struct SeqFirstView {
  Value* projection = nullptr;
  int64_t heads = 0;
  int64_t head_dim = 0;
  std::vector<int64_t> perm4;
  Dim batch;
};

// The view `transpose` heads, when it is one.
std::optional<SeqFirstView> FindSequenceFirstView(const Node& transpose);

// A sequence-first split: a Transpose (1, 0, 2) of P·V (B*H, T, Dv), its
// values V a sequence-first head view, whose (B, H) it gives.
std::optional<Heads> SequenceFirstSplitHeads(const Node& split);

// Adds Transpose(input, perm) named `name`; returns its output.
Value* AddTranspose(Graph& graph, Value* input, const std::vector<int64_t>& perm, const std::string& name);

// Transpose(Reshape(projection, [0, 0, H, D]), perm4): the 4-D heads a
// sequence-first view merges (the target copies L and B, allowzero 0).
Value* SequenceFirstHeads(Graph& graph, const SeqFirstView& view);

// The sequence-first split's result from the 4-D (B, H, T, Dv):
// Transpose(·, (2, 0, 1, 3)) viewed as (T, B*H, Dv), the three dims read
// at run time, so that every size (zero included) views as the 3-D one did.
Value* SequenceFirstOutput(Graph& graph, Value* result4, const Value& split_output);

}  // namespace attune::unmerge_heads

#endif  // ATTUNE_ENGINE_PASSES_UNMERGE_HEADS_VIEWS_H_
