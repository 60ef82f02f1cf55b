// Rotary position embedding: ONNX RotaryEmbedding (opset 23: X, cos_cache,
// sin_cache, position_ids?) and ONNX Runtime's com.microsoft.RotaryEmbedding
// (input, position_ids, cos_cache, sin_cache), one kernel for both orders.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

/// Where a rotary embedding reads its operands and how it rotates them.
struct RotaryLayout {
  int64_t batch = 0, seq = 0, heads = 0, head_size = 0, rotary_dim = 0;
  bool heads_first = false;  // X is [B, H, S, D]; else [B, S, H·D]
  bool interleaved = false;  // pairs (2i, 2i+1); else halves (i, i + rotary_dim/2)
};

/// Rotates every (b, s, h) row of x into y (same layout); position(b, s) is
/// the cache row, cos/sin rows hold rotary_dim/2 entries; the tail beyond
/// rotary_dim is copied. When `per_token_cache`, cos/sin are [B, S, rotary_dim/2]
/// and `positions` is ignored.
void ApplyRotary(const RotaryLayout& layout, const float* x, const float* cos, const float* sin,
                 const int64_t* positions, bool position_offset, bool per_token_cache, float* y, int threads);

absl::StatusOr<std::unique_ptr<Kernel>> MakeOnnxRotaryEmbeddingKernel(const KernelInfo& info);
absl::StatusOr<std::unique_ptr<Kernel>> MakeMsRotaryEmbeddingKernel(const KernelInfo& info);

}  // namespace attune
