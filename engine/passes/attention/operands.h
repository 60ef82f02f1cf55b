// Where the fused op's Q, K and V come from: walks back from the tensors the
// score and output MatMuls read, through transposes, a grouped-query head
// repeat, a KV-cache Concat and the Reshape+Transpose head split (each form
// a pattern in operand_forms.h). A form the walk reaches but cannot look
// through is noted with the check that failed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/graph.h"
#include "engine/passes/attention/operand_forms.h"

namespace attune::attention {

/// One of Q, K, V as the fused op can take it.
struct HeadOperand {
  int rank = 0;
  /// An existing value holding the operand in (B, H, T, D) layout (rank 3:
  /// (B, T, D)), or nullptr when only Transpose(base, perm) gives it.
  const Value* value = nullptr;
  const Value* base = nullptr;
  Perm perm;
  /// The (B, T, H·D) tensor a plain head split reads, when there is one.
  const Value* projection = nullptr;
  int64_t heads = 0;     // 0 when unknown
  int64_t head_dim = 0;  // 0 when unknown
  // K and V only:
  int64_t groups = 1;              // the grouped-query repeat factor that was looked through
  const Value* past = nullptr;     // past tensor concatenated before the new keys/values
  const Value* present = nullptr;  // the Concat output (past + new)
  /// Nodes looked through (transposes, repeat, concat, split) in order.
  std::vector<const Node*> nodes;
  /// The near misses of the walk, in order: each form it reached but could
  /// not look through, with the reason ("not a head split: Reshape 'r': ...").
  std::vector<std::string> misses;
};

struct ResolveOptions {
  bool look_through_repeat = false;
  bool look_through_past = false;
};

/// The operand Transpose(value, perm) (perm empty = identity) seen through
/// transposes, and for K/V through a grouped repeat and a past Concat.
/// InvalidArgument when `perm` is not a permutation of `rank`.
absl::StatusOr<HeadOperand> ResolveOperand(const Value* value, Perm perm, int rank, const ResolveOptions& options);

/// The permutation that composes Transpose(Transpose(x, inner), outer) into
/// one; nullopt unless both are permutations of the same rank.
std::optional<Perm> ComposePerms(const Perm& inner, const Perm& outer);
bool IsIdentityPerm(const Perm& perm);
Perm IdentityPerm(int rank);
/// The permutation swapping the last two of `rank` dims.
Perm SwapLastTwo(int rank);

}  // namespace attune::attention
