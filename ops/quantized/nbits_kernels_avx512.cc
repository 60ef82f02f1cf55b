// AVX-512 float32 paths of the N-bit products. 4-bit weights in blocks of 32
// or more take the row-streaming kernel below; 8-bit weights and blocks of 16
// unpack 16 weights at a time into a zmm of floats, (q − zp) times A
// accumulated per block, then scaled. 2-bit weights take the portable path.
//
// The 4-bit kernel reads each packed byte once and never reorders the
// weights: 16 bytes (32 weights) widen to 16 dwords, whose low nibbles are the
// block's even elements and whose high nibbles (after a shift) its odd ones.
// vpermps reads only the low 4 bits of each index, so a 16-entry table of the
// block's dequantized values, (q − zp) · scale for q = 0..15 (the zero points
// are widened to floats 16 blocks at a time per row), turns each nibble
// into its weight without masking or conversion. A is deinterleaved once per
// call to match: per 32 elements, the 16 even ones, then the 16 odd ones.
#include <immintrin.h>

#include <algorithm>
#include <vector>

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

// The first `len` of 16 lanes (none for len ≤ 0).
inline __mmask16 TailMask(int64_t len) {
  return len >= 16 ? 0xFFFF : len <= 0 ? 0 : static_cast<__mmask16>((1u << len) - 1);
}

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

void GemvFloatBlocks(const NBitsView& w, const float* a, float* y, int64_t n0, int64_t n1) {
  for (int64_t n = n0; n < n1; ++n) {
    float acc = 0.0f;
    for (int64_t blk = 0; blk < w.k_blocks; ++blk) {
      const int64_t k0 = blk * w.block_size, len = std::min(w.block_size, w.k - k0);
      acc += BlockDot(w.Blob(n, blk), a + k0, len, w.bits, w.ZeroPoint(n, blk)) * w.scales[n * w.k_blocks + blk];
    }
    y[n - n0] = acc;
  }
}

// out[32g + l] = a[32g + 2l], out[32g + 16 + l] = a[32g + 2l + 1], zeros from k to `padded`.
void DeinterleavePairs(const float* a, int64_t k, int64_t padded, float* out) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  for (int64_t g = 0; g < padded; g += 32) {
    const __m512 x0 = _mm512_maskz_loadu_ps(TailMask(k - g), a + g);
    const __m512 x1 = _mm512_maskz_loadu_ps(TailMask(k - g - 16), a + g + 16);
    _mm512_storeu_ps(out + g, _mm512_permutex2var_ps(x0, even, x1));
    _mm512_storeu_ps(out + g + 16, _mm512_permutex2var_ps(x0, odd, x1));
  }
}

// The zero point of every block of row n as a float, 16 blocks at a time.
void ZeroPointsOfRow(const NBitsView& w, int64_t n, float* out) {
  const int64_t at = n * w.k_blocks;
  for (int64_t blk = 0; blk < w.k_blocks; blk += 16) {
    const __mmask16 m = TailMask(w.k_blocks - blk);
    __m512 zp = _mm512_set1_ps(static_cast<float>(int64_t{1} << (w.bits - 1)));
    if (w.zero_points_f32 != nullptr) zp = _mm512_maskz_loadu_ps(m, w.zero_points_f32 + at + blk);
    if (w.zero_points_u8 != nullptr)
      zp = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, w.zero_points_u8 + at + blk)));
    _mm512_mask_storeu_ps(out + blk, m, zp);
  }
}

// Outputs n .. n + R − 1 over the deinterleaved row `ap`; R rows share each load of A.
// `zero_points` holds the zero point per block of each of the R rows.
template <int R>
void Rows4Bit(const NBitsView& w, const float* ap, const float* zero_points, int64_t n, float* y) {
  const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const int64_t groups = w.block_size / 32;
  __m512 acc[2 * R];
  for (int i = 0; i < 2 * R; ++i) acc[i] = _mm512_setzero_ps();
  for (int64_t blk = 0; blk < w.k_blocks; ++blk) {
    // (q − zp) · scale for q = 0..15, rounded as the dequantized weight is (a weight equal
    // to its zero point is exactly 0, so that inf · 0 gives NaN as in the reference).
    __m512 table[R];
    const uint8_t* blob[R];
    for (int r = 0; r < R; ++r) {
      table[r] = _mm512_mul_ps(_mm512_sub_ps(iota, _mm512_set1_ps(zero_points[r * w.k_blocks + blk])),
                               _mm512_set1_ps(w.scales[(n + r) * w.k_blocks + blk]));
      blob[r] = w.Blob(n + r, blk);
    }
    const float* ablk = ap + blk * w.block_size;
    for (int64_t g = 0; g < groups; ++g) {
      const __m512 a_even = _mm512_loadu_ps(ablk + 32 * g), a_odd = _mm512_loadu_ps(ablk + 32 * g + 16);
      for (int r = 0; r < R; ++r) {
        // The next rows' bytes at the same place: the rows of a product stream from memory.
        if (g % 4 == 0) _mm_prefetch(reinterpret_cast<const char*>(blob[r] + 16 * g + R * w.k_blocks * w.blob_size), _MM_HINT_T0);
        const __m512i x = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blob[r] + 16 * g)));
        acc[2 * r] = _mm512_fmadd_ps(a_even, _mm512_permutexvar_ps(x, table[r]), acc[2 * r]);
        acc[2 * r + 1] =
            _mm512_fmadd_ps(a_odd, _mm512_permutexvar_ps(_mm512_srli_epi32(x, 4), table[r]), acc[2 * r + 1]);
      }
    }
  }
  for (int r = 0; r < R; ++r) y[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc[2 * r], acc[2 * r + 1]));
}

void GemvFloat4Bit(const NBitsView& w, const float* a, float* y, int64_t n0, int64_t n1) {
  const int64_t padded = w.k_blocks * w.block_size;
  thread_local std::vector<float> pairs;
  pairs.resize(padded);
  DeinterleavePairs(a, w.k, padded, pairs.data());
  thread_local std::vector<float> zero_points;
  zero_points.resize(4 * w.k_blocks);
  int64_t n = n0;
  for (; n + 4 <= n1; n += 4) {
    for (int r = 0; r < 4; ++r) ZeroPointsOfRow(w, n + r, zero_points.data() + r * w.k_blocks);
    Rows4Bit<4>(w, pairs.data(), zero_points.data(), n, y + (n - n0));
  }
  for (; n < n1; ++n) {
    ZeroPointsOfRow(w, n, zero_points.data());
    Rows4Bit<1>(w, pairs.data(), zero_points.data(), n, y + (n - n0));
  }
}

}  // namespace

void GemvFloatAvx512(const NBitsView& w, const float* a, float* y, int64_t n0, int64_t n1) {
  if (w.bits == 2) return GemvFloatPortable(w, a, y, n0, n1);
  if (w.bits == 4 && w.block_size >= 32) return GemvFloat4Bit(w, a, y, n0, n1);
  GemvFloatBlocks(w, a, y, n0, n1);
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
