// Node checks and wrapper sets that many patterns share.
#pragma once

#include <vector>

#include "engine/pattern/pattern.h"

namespace attune::pattern {

/// A Cast whose target type is its input's type (a no-op).
NodeCheck IsNoOpCast();
/// A Dropout that is the identity at inference: no training_mode input, or a
/// constant false one.
NodeCheck IsInferenceDropout();
/// The wrappers that do not change a tensor: Identity, inference Dropout, no-op Cast.
std::vector<OpPattern> IdentityWrappers();
/// True when `perm` holds each of 0 .. size - 1 once.
bool IsPermutation(const std::vector<int64_t>& perm);
/// The normalised permutation attribute of a Transpose (reversed dims when absent),
/// or nullopt when the rank is unknown and there is no attribute, or when the
/// attribute is not a permutation of the input's rank.
std::optional<std::vector<int64_t>> TransposePerm(const Node& node);

}  // namespace attune::pattern
