// Checks the shapes and element types of an attention node's Q, K, V and
// KV-cache inputs, and derives every dimension the computation needs.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "ops/attention/attention_params.h"

namespace attune::attention {

struct AttentionShapes {
  /// Q, K, V given as (batch, seq, heads·dim) rather than (batch, heads, seq, dim).
  bool three_d = false;
  ElementType type = ElementType::kFloat32;  // of Q, K, V, past, present and Y
  int64_t batch = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  int64_t q_len = 0;
  int64_t new_kv_len = 0;  // keys in K (this step)
  int64_t past_len = 0;    // keys in past_key (0 without a cache)
  int64_t total_kv_len = 0;
  int64_t head_dim = 0;    // of Q and K
  int64_t v_head_dim = 0;  // of V and Y
  bool has_past = false;

  /// Y has Q's layout: (B, Tq, Hq·Dv) for 3-D inputs, (B, Hq, Tq, Dv) for 4-D.
  std::vector<int64_t> y_shape() const;
  /// (B, Hkv, total_kv_len, D) and (B, Hkv, total_kv_len, Dv), always 4-D.
  std::vector<int64_t> present_key_shape() const;
  std::vector<int64_t> present_value_shape() const;
  /// (B, Hq, Tq, total_kv_len).
  std::vector<int64_t> qk_shape() const;
};

/// InvalidArgument naming the input for a wrong rank, a mismatched dimension,
/// a head count that does not divide a hidden size or another head count, or
/// mixed element types; Unimplemented for an element type no path supports.
/// past_key / past_value may be null (both, or neither).
absl::StatusOr<AttentionShapes> ResolveAttentionShapes(const AttentionParams& params, const Tensor& q, const Tensor& k,
                                                       const Tensor& v, const Tensor* past_key,
                                                       const Tensor* past_value);

}  // namespace attune::attention
