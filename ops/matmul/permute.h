// Dimension permutation (a transposing copy) for Einsum's operand layouts.
#pragma once

#include <span>

#include "absl/status/statusor.h"
#include "attune/tensor.h"

namespace attune {

/// True when perm is 0, 1, 2, ... (nothing to move).
bool IsIdentityPermutation(std::span<const int> perm);

/// A new tensor with out.shape[i] = in.shape[perm[i]] holding the permuted
/// elements; allocated within max_bytes.
absl::StatusOr<Tensor> Permute(const Tensor& in, std::span<const int> perm, int64_t max_bytes, int threads);

/// Copies `in` permuted into `out`, which already has the permuted shape.
void PermuteInto(const Tensor& in, std::span<const int> perm, Tensor& out, int threads);

}  // namespace attune
