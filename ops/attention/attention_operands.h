// The float views the attention computation reads: Q, and K, V after the KV
// cache (past ++ new). Also produces the present_key / present_value outputs.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "ops/attention/attention_shapes.h"
#include "ops/attention/kernels/attention_args.h"
#include "ops/kernel.h"

namespace attune::attention {

struct AttentionOperands {
  StridedView q;  // [batch][q_heads][q_len][head_dim]
  StridedView k;  // [batch][kv_heads][total_kv_len][head_dim]
  StridedView v;  // [batch][kv_heads][total_kv_len][v_head_dim]
  /// Converted or concatenated data the views point into.
  std::vector<Tensor> buffers;
  /// Whether every K (V) entry is known finite: found while a float32 cache
  /// was concatenated (or the new rows appended, with the binding's memory of
  /// the earlier rows), so that the non-finite rules need not read it again.
  bool k_finite = false;
  bool v_finite = false;
};

/// A [B][H][T][D] view of contiguous data laid out as (B, T, H·D) when
/// `three_d`, else as (B, H, T, D).
StridedView HeadView(const float* data, bool three_d, int64_t heads, int64_t seq, int64_t dim);

/// Builds the views (zero-copy for float32 inputs without a cache) and writes
/// present_key / present_value (= Concat(past, new) along the sequence, 4-D,
/// in the input element type) when the node asks for them. A past bound to a
/// cache buffer (KernelContext::cache_append) is read in place through its
/// capacity stride instead, and only the new rows are written, after it; the
/// present output is then the whole buffer.
absl::StatusOr<AttentionOperands> PrepareAttentionOperands(KernelContext& ctx, const AttentionShapes& s,
                                                           const Tensor& q, const Tensor& k, const Tensor& v,
                                                           const Tensor* past_key, const Tensor* past_value);

}  // namespace attune::attention
