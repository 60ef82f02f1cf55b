// The decode path (a few query rows against a long KV cache), written once
// over the SIMD traits V like flash_tile.h. Memory bound: one task streams a
// chunk of K and V of one kv head once, in sub-blocks that stay in L1/L2
// while every query row of the heads sharing that kv head consumes them, and
// leaves per row a partial (max, sum, acc) that RunFlashAttention merges.
//
// Vectors run along head_dim here: V::DotRows gives kLanes keys' scores at
// once (one FMA per head_dim vector per key, then a transposing reduction),
// and V::AccumulateRows adds p_j · V[j] for a run of keys with the
// accumulator held in registers.
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
  // With a bias the scores are in natural units, scale·q·k + bias, so that a
  // large bias (-1e4, finfo.min) rounds as the subgraph's Add does; the
  // exponents are then (x - max)·log2e. Without one they are in log2 units.
  const bool natural = a.bias.data != nullptr;
  const float score_scale = natural ? a.scale : log2_scale;
  const float unit = natural ? kLog2e : 1.0f;  // exp2 exponent per score unit
  const float cap = natural ? a.softcap : a.softcap * kLog2e;
  const int64_t k_stride = a.k.stride_seq, v_stride = a.v.stride_seq;
  // K and V rows are strided (3 KB apart for B,T,H·D with 12 heads): the
  // hardware prefetchers do not follow them across pages, so each sub-block
  // prefetches the next one into L2.
  auto prefetch = [&](int64_t from, int64_t to) {
    if (from >= to) return;
    PrefetchRows<V>(RowOf(a.k, task.batch, task.kv_head, from), k_stride, to - from, a.head_dim);
    PrefetchRows<V>(RowOf(a.v, task.batch, task.kv_head, from), v_stride, to - from, a.v_head_dim);
  };
  prefetch(task.k_begin, std::min(task.k_begin + kDecodeSubBlock, task.k_end));
  alignas(64) float s[kDecodeSubBlock];
  for (int64_t j0 = task.k_begin; j0 < task.k_end; j0 += kDecodeSubBlock) {
    const int64_t j1 = std::min(j0 + kDecodeSubBlock, task.k_end);
    prefetch(j1, std::min(j1 + kDecodeSubBlock, task.k_end));
    const float* k0 = RowOf(a.k, task.batch, task.kv_head, j0);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t head = task.kv_head * group + r / a.q_len;
      const int64_t i = r % a.q_len;
      const KeyRange keys = VisibleKeys(a, task.batch, i);
      const int64_t lo = std::max(keys.begin, j0), hi = std::min(keys.end, j1);
      if (lo >= hi) continue;
      const float* q = RowOf(a.q, task.batch, head, i);
      // Scores of keys [lo, hi), -inf elsewhere in the sub-block; whole
      // groups of L keys where they exist (they never pass the chunk end).
      int64_t j = 0;
      for (; j < lo - j0; ++j) s[j] = kNegInf;
      for (; j0 + j + L <= hi; j += L) V::Store(s + j, V::DotRows(q, k0 + j * k_stride, k_stride, a.head_dim));
      for (; j0 + j < hi; ++j) s[j] = V::Dot(q, k0 + j * k_stride, a.head_dim);
      for (; j < kDecodeSubBlock; ++j) s[j] = kNegInf;
      const float* bias = a.bias.data != nullptr ? RowOf(a.bias, task.batch, head, i) + j0 : nullptr;
      float block_max = kNegInf;
      for (j = lo - j0; j < hi - j0; ++j) {
        float x = s[j] * score_scale;
        if (bias != nullptr) x += bias[j];
        if (softcap && x != kNegInf) x = cap * std::tanh(x / cap);
        s[j] = x;
        block_max = std::max(block_max, x);
      }
      if (block_max == kNegInf) continue;
      float* part = task.partial + r * part_stride;
      if (block_max > part[0]) {
        if (part[0] != kNegInf) {
          const float alpha = std::exp2((part[0] - block_max) * unit);
          part[1] *= alpha;
          for (int64_t d = 0; d < a.v_head_dim; ++d) part[2 + d] *= alpha;
        }
        part[0] = block_max;
      }
      const F m = V::Set1(part[0]);
      const F unitv = V::Set1(unit);
      F sum = V::Zero();
      for (j = 0; j < kDecodeSubBlock; j += L) {
        const F p = V::Exp2(natural ? V::Mul(V::Sub(V::Load(s + j), m), unitv) : V::Sub(V::Load(s + j), m));
        V::Store(s + j, p);
        sum = V::Add(sum, p);
      }
      alignas(64) float lanes[L];
      V::Store(lanes, sum);
      for (int64_t l = 0; l < L; ++l) part[1] += lanes[l];
      V::AccumulateRows(part + 2, s + (lo - j0), RowOf(a.v, task.batch, task.kv_head, lo), v_stride, hi - lo,
                        a.v_head_dim);
    }
  }
}

}  // namespace attune::attention::flash_detail
