// attune.GroupQueryPositions: the key positions ONNX Runtime's
// GroupQueryAttention gives its new tokens, read from seqlens_k and
// total_sequence_length, checked against the cache it lowers onto.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

/// Inputs (query [B, S, ·], seqlens_k int32 [B], total_sequence_length int32
/// [] or [1], past_key's shape? (Shape of [B, kv_heads, P, D]: reading only the
/// shape leaves the cache to be appended in place)); outputs (query, unchanged and
/// shared; positions int64 [B, S]).
absl::StatusOr<std::unique_ptr<Kernel>> MakeGroupQueryPositionsKernel(const KernelInfo& info);

}  // namespace attune
