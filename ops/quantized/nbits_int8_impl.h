// The int8-activation product (accuracy_level 4) over ymm registers, written
// once over its u8·s8 dot-product step: AVX2 (vpmaddubsw + vpmaddwd) and
// AVX-512 VNNI (vpdpbusd) instantiate it in their own files. Weights are
// unsigned (4-bit values 0..15, or bytes), activations signed int8, so no
// offset is needed; the zero point is taken off per block as zp · Σ q_a.
// Included only by ISA files compiled with AVX2 or better.
#pragma once

#include <immintrin.h>

#include <algorithm>

#include "ops/quantized/nbits_kernels.h"

namespace attune::quantized {

// 32 4-bit weights (16 bytes, low nibble first) as 32 bytes in element order.
inline __m256i Unpack32Nibbles(const uint8_t* p) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i mask = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_and_si128(packed, mask);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(packed, 4), mask);
  return _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
}

inline __m256i Load32Weights(const uint8_t* blob, int64_t kk, int64_t bits) {
  return bits == 4 ? Unpack32Nibbles(blob + kk / 2) : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blob + kk));
}

inline float HorizontalSum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// Dot::Step(acc, weights_u8, activations_s8) adds 4-byte dot products into 8 int32 lanes.
// Dot::kBits8 says whether 8-bit weights are exact with it (vpmaddubsw saturates at 2^15).
template <typename Dot>
void GemvInt8Impl(const NBitsView& w, const Int8Row& a, float* y, int64_t n0, int64_t n1) {
  if (w.block_size < 32 || w.bits == 2 || (w.bits == 8 && !Dot::kBits8)) return GemvInt8Portable(w, a, y, n0, n1);
  int64_t n = n0;
  for (; n + 2 <= n1; n += 2) {  // two outputs share each activation load
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    float correction0 = 0.0f, correction1 = 0.0f;
    for (int64_t blk = 0; blk < w.k_blocks; ++blk) {
      const uint8_t* b0 = w.Blob(n, blk);
      const uint8_t* b1 = w.Blob(n + 1, blk);
      const int8_t* q = a.q + blk * w.block_size;
      __m256i dot0 = _mm256_setzero_si256(), dot1 = _mm256_setzero_si256();
      for (int64_t kk = 0; kk < w.block_size; kk += 32) {
        const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + kk));
        dot0 = Dot::Step(dot0, Load32Weights(b0, kk, w.bits), av);
        dot1 = Dot::Step(dot1, Load32Weights(b1, kk, w.bits), av);
      }
      const float s0 = a.scale[blk] * w.scales[n * w.k_blocks + blk];
      const float s1 = a.scale[blk] * w.scales[(n + 1) * w.k_blocks + blk];
      acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot0), _mm256_set1_ps(s0), acc0);
      acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot1), _mm256_set1_ps(s1), acc1);
      correction0 += static_cast<float>(w.ZeroPointInt(n, blk) * a.sum[blk]) * s0;
      correction1 += static_cast<float>(w.ZeroPointInt(n + 1, blk) * a.sum[blk]) * s1;
    }
    y[n - n0] = HorizontalSum(acc0) - correction0;
    y[n + 1 - n0] = HorizontalSum(acc1) - correction1;
  }
  if (n < n1) {
    __m256 acc = _mm256_setzero_ps();
    float correction = 0.0f;
    for (int64_t blk = 0; blk < w.k_blocks; ++blk) {
      const uint8_t* b0 = w.Blob(n, blk);
      const int8_t* q = a.q + blk * w.block_size;
      __m256i dot = _mm256_setzero_si256();
      for (int64_t kk = 0; kk < w.block_size; kk += 32)
        dot = Dot::Step(dot, Load32Weights(b0, kk, w.bits),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + kk)));
      const float s = a.scale[blk] * w.scales[n * w.k_blocks + blk];
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(s), acc);
      correction += static_cast<float>(w.ZeroPointInt(n, blk) * a.sum[blk]) * s;
    }
    y[n - n0] = HorizontalSum(acc) - correction;
  }
}

}  // namespace attune::quantized
