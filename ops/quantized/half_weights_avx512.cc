// AVX-512 paths of the half-size weight products: 16 weights widened to a
// zmm of floats (float16 with vcvtph2ps, bfloat16 by a 16-bit shift), fused-
// multiply-added with A in 16 lanes, then reduced pairwise as the portable
// variant does, so both give the same bits.
#include <immintrin.h>

#include "ops/quantized/half_weights.h"

namespace attune::quantized {
namespace {

inline __m512 Widen16(const uint16_t* p, bool bf16, __mmask16 mask) {
  const __m256i bits = _mm256_maskz_loadu_epi16(mask, p);
  // The maskz forms: GCC 12 warns of the unmasked ones' undefined pass-through.
  if (bf16) return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, _mm512_maskz_cvtepu16_epi32(0xFFFF, bits), 16));
  return _mm512_cvtph_ps(bits);
}

inline float ReducePairwise(__m512 v) {
  __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
  __m128 h1 = _mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1));
  return _mm_cvtss_f32(h1);
}

}  // namespace

void HalfGemvAvx512(const HalfView& w, const float* a, float* y, int64_t n0, int64_t n1) {
  const int64_t full = w.k / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (w.k - full)) - 1);
  for (int64_t j = n0; j < n1; ++j) {
    const uint16_t* row = w.w + j * w.k;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t k = 0; k < full; k += 16)
      acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + k), Widen16(row + k, w.bf16, 0xFFFF), acc);
    if (tail != 0)
      acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, a + full), Widen16(row + full, w.bf16, tail), acc);
    y[j - n0] = ReducePairwise(acc);
  }
}

void HalfWidenRowsAvx512(const HalfView& w, int64_t n0, int64_t n1, float* dst) {
  const int64_t total = (n1 - n0) * w.k;
  const uint16_t* src = w.w + n0 * w.k;
  for (int64_t i = 0; i < total; i += 16) {
    const __mmask16 mask = total - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (total - i)) - 1);
    _mm512_mask_storeu_ps(dst + i, mask, Widen16(src + i, w.bf16, mask));
  }
}

void RoundToBf16Avx512(const float* src, int64_t count, uint16_t* dst) {
  const __m512i half_ulp = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 mask = count - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (count - i)) - 1);
    const __m512 x = _mm512_maskz_loadu_ps(mask, src + i);
    const __m512i bits = _mm512_castps_si512(x);
    const __m512i high = _mm512_maskz_srli_epi32(0xFFFF, bits, 16);
    // Nearest even: add 0x7fff plus the lowest kept bit, then drop 16 bits.
    const __m512i rounded =
        _mm512_maskz_srli_epi32(0xFFFF, _mm512_add_epi32(bits, _mm512_add_epi32(half_ulp, _mm512_and_si512(high, one))), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    const __m512i out = _mm512_mask_or_epi32(rounded, nan, high, quiet);
    _mm256_mask_storeu_epi16(dst + i, mask, _mm512_maskz_cvtepi32_epi16(0xFFFF, out));
  }
}

}  // namespace attune::quantized
