// The decode path (a few query rows against a long KV cache), written once
// over the SIMD traits V like flash_tile.h. Memory bound: one task streams a
// chunk of K and V of one kv head once, in sub-blocks that stay in L1/L2
// while every query row of the heads sharing that kv head consumes them, and
// leaves per row a partial (max, sum, acc) that RunFlashAttention merges.
//
// Here vectors run along head_dim (V::Dot, V::Axpy), not along queries.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ops/attention/kernels/attention_mask.h"
#include "ops/attention/kernels/flash_attention.h"
#include "ops/attention/kernels/flash_tile.h"

namespace attune::attention::flash_detail {

inline constexpr int64_t kDecodeSubBlock = 64;

template <class V>
void DecodeChunk(const AttentionArgs& a, float log2_scale, const DecodeTask& task, int64_t group) {
  using F = typename V::F;
  constexpr int64_t L = V::kLanes;
  static_assert(kDecodeSubBlock % L == 0);
  const int64_t rows = group * a.q_len;
  const int64_t part_stride = 2 + a.v_head_dim;
  for (int64_t r = 0; r < rows; ++r) {
    float* part = task.partial + r * part_stride;
    part[0] = kNegInf;
    part[1] = 0.0f;
    std::fill(part + 2, part + part_stride, 0.0f);
  }
  const bool softcap = a.softcap > 0.0f;
  const float cap = a.softcap * kLog2e;
  alignas(64) float s[kDecodeSubBlock];
  for (int64_t j0 = task.k_begin; j0 < task.k_end; j0 += kDecodeSubBlock) {
    const int64_t j1 = std::min(j0 + kDecodeSubBlock, task.k_end);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t head = task.kv_head * group + r / a.q_len;
      const int64_t i = r % a.q_len;
      const KeyRange keys = VisibleKeys(a, task.batch, i);
      const int64_t lo = std::max(keys.begin, j0), hi = std::min(keys.end, j1);
      if (lo >= hi) continue;
      const float* q = RowOf(a.q, task.batch, head, i);
      const float* bias = a.bias.data != nullptr ? RowOf(a.bias, task.batch, head, i) : nullptr;
      float block_max = kNegInf;
      for (int64_t j = 0; j < kDecodeSubBlock; ++j) {
        const int64_t key = j0 + j;
        if (key < lo || key >= hi) {
          s[j] = kNegInf;
          continue;
        }
        float x = V::Dot(q, RowOf(a.k, task.batch, task.kv_head, key), a.head_dim) * log2_scale;
        if (bias != nullptr) x += bias[key] * kLog2e;
        if (softcap && x != kNegInf) x = cap * std::tanh(x / cap);
        s[j] = x;
        block_max = std::max(block_max, x);
      }
      if (block_max == kNegInf) continue;
      float* part = task.partial + r * part_stride;
      if (block_max > part[0]) {
        if (part[0] != kNegInf) {
          alignas(64) float alpha[L];
          V::Store(alpha, V::Exp2(V::Set1(part[0] - block_max)));
          part[1] *= alpha[0];
          V::Scale(part + 2, alpha[0], a.v_head_dim);
        }
        part[0] = block_max;
      }
      const F m = V::Set1(part[0]);
      float sum = 0.0f;
      for (int64_t j = 0; j < kDecodeSubBlock; j += L) V::Store(s + j, V::Exp2(V::Sub(V::Load(s + j), m)));
      for (int64_t key = lo; key < hi; ++key) {
        const float p = s[key - j0];
        sum += p;
        V::Axpy(part + 2, p, RowOf(a.v, task.batch, task.kv_head, key), a.v_head_dim);
      }
      part[1] += sum;
    }
  }
}

}  // namespace attune::attention::flash_detail
