// attune.AttentionMaskIndex: the mask_index / key_padding_mask of ONNX
// Runtime's Attention and MultiHeadAttention turned into what
// attune.MultiHeadAttention reads: a key padding row per sequence (the flash
// kernels skip the padded blocks), or an additive mask where the form is per
// query row.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

/// Inputs (mask int32, query [B, S, ...], key? ([B, L, ...], or [B, N, L, H]
/// when 4-D; absent: L = S), past_key's shape? int64 [4] (P = its dim 2)),
/// T = P + L keys. Attribute `additive` (0 or 1) picks the output:
///   0: bool [B, T], true where the key is visible, from a mask of
///      [B] (keys before the end position), [2B] (ends, then starts: keys in
///      [start, end)) or [B, T] (entries > 0);
///   1: float [B, 1, S, T], 0 where visible and `fill` where hidden, from a
///      mask of [B, S, T] or [B, 1, M, M] with M >= P + S (rows P .. P + S - 1,
///      keys 0 .. T - 1) (entries > 0 are visible).
/// Any other shape is refused with its dims.
absl::StatusOr<std::unique_ptr<Kernel>> MakeAttentionMaskIndexKernel(const KernelInfo& info);

}  // namespace attune
