// AVX2 paths of the N-bit products: the int8 product with vpmaddubsw +
// vpmaddwd (4-bit weights; its 16-bit pair sums saturate for bytes, so 8-bit
// weights take the portable path), and the float32 product on ymm.
#include <algorithm>

#include "ops/quantized/nbits_int8_impl.h"

namespace attune::quantized {
namespace {

struct Avx2Dot {
  static constexpr bool kBits8 = false;
  static __m256i Step(__m256i acc, __m256i weights, __m256i activations) {
    const __m256i pairs = _mm256_maddubs_epi16(weights, activations);  // ≤ 2·15·127: no saturation
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};

// 8 quantized weights starting at element kk of a block (kk a multiple of 8), as floats.
inline __m256 Load8(const uint8_t* blob, int64_t kk, int64_t bits) {
  __m128i bytes;
  if (bits == 4) {
    const __m128i packed = _mm_cvtsi32_si128(*reinterpret_cast<const int*>(blob + kk / 2));
    const __m128i mask = _mm_set1_epi8(0x0F);
    bytes = _mm_unpacklo_epi8(_mm_and_si128(packed, mask), _mm_and_si128(_mm_srli_epi16(packed, 4), mask));
  } else {
    bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(blob + kk));
  }
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
}

}  // namespace

void GemvInt8Avx2(const NBitsView& w, const Int8Row& a, float* y, int64_t n0, int64_t n1) {
  GemvInt8Impl<Avx2Dot>(w, a, y, n0, n1);
}

void GemvFloatAvx2(const NBitsView& w, const float* a, float* y, int64_t n0, int64_t n1) {
  if (w.bits == 2) return GemvFloatPortable(w, a, y, n0, n1);
  for (int64_t n = n0; n < n1; ++n) {
    float acc = 0.0f;
    for (int64_t blk = 0; blk < w.k_blocks; ++blk) {
      const uint8_t* blob = w.Blob(n, blk);
      const int64_t k0 = blk * w.block_size, len = std::min(w.block_size, w.k - k0);
      const __m256 vzp = _mm256_set1_ps(w.ZeroPoint(n, blk));
      __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
      int64_t kk = 0;
      for (; kk + 16 <= len; kk += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + k0 + kk), _mm256_sub_ps(Load8(blob, kk, w.bits), vzp), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + k0 + kk + 8), _mm256_sub_ps(Load8(blob, kk + 8, w.bits), vzp),
                               acc1);
      }
      float tail = 0.0f;  // the last block of a K that is not a multiple of 16
      for (; kk < len; ++kk) {
        const int q = w.bits == 4 ? (blob[kk >> 1] >> ((kk & 1) * 4)) & 0xF : blob[kk];
        tail += a[k0 + kk] * (static_cast<float>(q) - w.ZeroPoint(n, blk));
      }
      acc += (HorizontalSum(_mm256_add_ps(acc0, acc1)) + tail) * w.scales[n * w.k_blocks + blk];
    }
    y[n - n0] = acc;
  }
}

}  // namespace attune::quantized
