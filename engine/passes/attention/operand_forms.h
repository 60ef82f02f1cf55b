// The forms the attention operand walks look through, each a pattern of the
// combinator matcher (engine/pattern/) with a reason for every check: a
// Transpose whose perm can be read, the grouped-query head repeat, the
// KV-cache Concat, the Reshape that splits heads, and the head merge after
// the output MatMul.
//
// Every finder returns the form it found, or a status that says why not:
//   NotFound            the value is not produced by the form's first op:
//                       the walk simply does not go that way;
//   FailedPrecondition  it is, but a check failed (a near miss): the message
//                       names the node and the check, and the walk records it.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/graph.h"

namespace attune::attention {

using Perm = std::vector<int64_t>;

/// The number of dims of a value, or 0 when unknown.
int RankOf(const Value* value);
/// Dim `i` of a value's shape (negative counts from the end), or an unknown Dim.
Dim DimOf(const Value* value, int i);

/// `value` = Transpose(input, perm), with a perm that is a permutation of the input's rank.
struct TransposeStep {
  const Node* node = nullptr;
  const Value* input = nullptr;
  Perm perm;
};
absl::StatusOr<TransposeStep> FindTranspose(const Value* value);

/// x (B, Hkv·G, T, D) = Reshape(Expand|Tile(Unsqueeze(source, 2), ..)): each
/// of the source's heads repeated G times in a row, the grouping the fused op
/// uses; or x = Expand|Tile(source) of a single-head source (G = H).
struct HeadRepeat {
  const Value* source = nullptr;  // (B, Hkv, T, D)
  int64_t groups = 1;
  std::vector<const Node*> nodes;
};
absl::StatusOr<HeadRepeat> FindGroupedRepeat(const Value* x);

/// x (B, H, past + T, D) = Concat(past, fresh) on the sequence axis.
struct PastConcat {
  const Value* past = nullptr;
  const Value* fresh = nullptr;
  const Node* node = nullptr;
  /// Identities between the Concat and x (a same-type Cast of the present,
  /// as Phi and CodeGen write it, becomes one), nearest x first.
  std::vector<const Node*> identities;
};
absl::StatusOr<PastConcat> FindPastConcat(const Value* x);

/// x (B, T, H, D) = Reshape(projection (B, T, H·D)): the plain head split.
struct HeadSplit {
  const Value* projection = nullptr;
  int64_t heads = 0;
  int64_t head_dim = 0;
  const Node* node = nullptr;
};
absl::StatusOr<HeadSplit> FindHeadSplit(const Value* x);

/// The merge reading `y4` (B, H, T, Dv): Transpose(0, 2, 1, 3) then Reshape to
/// (B, T, H·Dv), when y4 and the transpose have no other reader.
struct HeadMerge {
  const Value* merged = nullptr;  // the Reshape output (B, T, H·Dv)
  std::vector<const Node*> nodes;
};
absl::StatusOr<HeadMerge> FindHeadMerge(const Value* y4, int64_t heads, int64_t v_head_dim);

}  // namespace attune::attention
