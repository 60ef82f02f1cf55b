// AVX-512 float32 paths of the N-bit products: 16 weights at a time are
// unpacked from their nibbles or bytes into a zmm of floats, (q − zp) times
// A accumulated per block, then scaled. 2-bit weights take the portable path.
#include <immintrin.h>

#include <algorithm>

#include "ops/quantized/nbits_kernels.h"

namespace attune::quantized {
namespace {

// 16 quantized weights starting at element kk of a block (kk a multiple of 16), as floats.
inline __m512 Load16(const uint8_t* blob, int64_t kk, int64_t bits) {
  __m128i bytes;
  if (bits == 4) {
    const __m128i packed = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(blob + kk / 2));
    const __m128i mask = _mm_set1_epi8(0x0F);
    const __m128i lo = _mm_and_si128(packed, mask);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(packed, 4), mask);
    bytes = _mm_unpacklo_epi8(lo, hi);  // element order: low nibble first
  } else {
    bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blob + kk));
  }
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes));
}

inline __mmask16 TailMask(int64_t len) { return len >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << len) - 1); }

// Σ a·(q − zp) over one block of `len` elements.
inline float BlockDot(const uint8_t* blob, const float* a, int64_t len, int64_t bits, float zp) {
  const __m512 vzp = _mm512_set1_ps(zp);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int64_t kk = 0;
  for (; kk + 32 <= len; kk += 32) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + kk), _mm512_sub_ps(Load16(blob, kk, bits), vzp), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + kk + 16), _mm512_sub_ps(Load16(blob, kk + 16, bits), vzp), acc1);
  }
  for (; kk < len; kk += 16) {
    const __m512 av = _mm512_maskz_loadu_ps(TailMask(len - kk), a + kk);
    acc0 = _mm512_fmadd_ps(av, _mm512_sub_ps(Load16(blob, kk, bits), vzp), acc0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

}  // namespace

void GemvFloatAvx512(const NBitsView& w, const float* a, float* y, int64_t n0, int64_t n1) {
  if (w.bits == 2) return GemvFloatPortable(w, a, y, n0, n1);
  for (int64_t n = n0; n < n1; ++n) {
    float acc = 0.0f;
    for (int64_t blk = 0; blk < w.k_blocks; ++blk) {
      const int64_t k0 = blk * w.block_size, len = std::min(w.block_size, w.k - k0);
      acc += BlockDot(w.Blob(n, blk), a + k0, len, w.bits, w.ZeroPoint(n, blk)) * w.scales[n * w.k_blocks + blk];
    }
    y[n - n0] = acc;
  }
}

void DequantizeRowsAvx512(const NBitsView& w, int64_t n0, int64_t n1, float* dst) {
  if (w.bits == 2) return DequantizeRowsPortable(w, n0, n1, dst);
  for (int64_t n = n0; n < n1; ++n) {
    float* row = dst + (n - n0) * w.k;
    for (int64_t blk = 0; blk < w.k_blocks; ++blk) {
      const uint8_t* blob = w.Blob(n, blk);
      const __m512 vzp = _mm512_set1_ps(w.ZeroPoint(n, blk));
      const __m512 vscale = _mm512_set1_ps(w.scales[n * w.k_blocks + blk]);
      const int64_t k0 = blk * w.block_size, len = std::min(w.block_size, w.k - k0);
      for (int64_t kk = 0; kk < len; kk += 16)
        _mm512_mask_storeu_ps(row + k0 + kk, TailMask(len - kk),
                              _mm512_mul_ps(_mm512_sub_ps(Load16(blob, kk, w.bits), vzp), vscale));
    }
  }
}

}  // namespace attune::quantized
