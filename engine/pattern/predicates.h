// Node checks and wrapper sets that many patterns share.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "engine/pattern/pattern.h"

namespace attune::pattern {

/// A Cast whose target type is its input's type (a no-op).
NodeCheck IsNoOpCast();
/// A Dropout that is the identity at inference: no training_mode input, or a
/// constant false one.
NodeCheck IsInferenceDropout();
/// The wrappers that do not change a tensor: Identity, inference Dropout, no-op Cast.
std::vector<OpPattern> IdentityWrappers();
/// Why the matched nodes cannot all be removed when `root`'s output is
/// replaced: a value one of them (other than `root`) produces is a graph
/// output or is read by a node outside the match; nullopt when none is.
/// Nodes in `kept` are passed over: the rewrite keeps their outputs (the
/// fused op produces them too).
std::optional<std::string> CheckInternalUses(const Match& match, const Node* root,
                                             const std::vector<const Node*>& kept = {});
/// True when `perm` holds each of 0 .. size - 1 once.
bool IsPermutation(const std::vector<int64_t>& perm);
/// The normalised permutation attribute of a Transpose (reversed dims when
/// absent), or why it cannot be read: no attribute and an unknown input rank,
/// or an attribute that is not a permutation of the input's rank. Only a
/// permutation of the right size is ever handed on, so callers may index with it.
absl::StatusOr<std::vector<int64_t>> TransposePerm(const Node& node);

}  // namespace attune::pattern
