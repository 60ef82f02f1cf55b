// AVX-512 VNNI int8 path of the N-bit products (accuracy_level 4).
//
// 4-bit weights stream as the file packs them: each row's blocks are
// contiguous, so 64 bytes of a row hold 128 consecutive weights, the low
// nibbles the even elements and the high nibbles the odd ones. Masking (and
// shifting) gives two zmm of unsigned bytes; the quantized row of A is
// deinterleaved once per call into its even and odd elements to match, and
// vpdpbusd sums 4 products per dword lane. Every lane lies in one block (a
// block of 16 or more spans whole lanes), so each lane's sum is scaled by
// its block's scale_a · scale_w before the lanes are added; the zero points
// come off per block as zp · Σ q_a. 8-bit weights take the ymm kernel of
// nbits_int8_impl.h.
#include <algorithm>
#include <vector>

#include "ops/quantized/nbits_int8_impl.h"

namespace attune::quantized {
namespace {

struct VnniDot {
  static constexpr bool kBits8 = true;  // vpdpbusd adds in int32, exact for bytes
  static __m256i Step(__m256i acc, __m256i weights, __m256i activations) {
    return _mm256_dpbusd_epi32(acc, weights, activations);
  }
};

inline __mmask16 Mask16(int64_t len) {
  return len >= 16 ? 0xFFFF : len <= 0 ? 0 : static_cast<__mmask16>((1u << len) - 1);
}
inline __mmask64 Mask64(int64_t len) { return len >= 64 ? ~__mmask64{0} : (__mmask64{1} << len) - 1; }

// What every row of one call shares: A's even and odd elements, each lane's
// activation scale, and per block scale_a · Σ q_a.
struct PreparedRow {
  std::vector<int8_t> even, odd;   // [chunks · 64]
  std::vector<float> lane_scale;   // [chunks · 16]
  std::vector<float> scaled_sum;   // [k_blocks]
};

void Prepare(const NBitsView& w, const Int8Row& a, int64_t chunks, PreparedRow& p) {
  const int64_t pairs = w.k_blocks * w.block_size / 2;
  p.even.assign(chunks * 64, 0);
  p.odd.assign(chunks * 64, 0);
  for (int64_t j = 0; j < pairs; ++j) {
    p.even[j] = a.q[2 * j];
    p.odd[j] = a.q[2 * j + 1];
  }
  p.lane_scale.assign(chunks * 16, 0.0f);
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t l = 0; l < 16; ++l) {
      const int64_t blk = (128 * c + 8 * l) / w.block_size;
      if (blk < w.k_blocks) p.lane_scale[c * 16 + l] = a.scale[blk];
    }
  p.scaled_sum.resize(w.k_blocks);
  for (int64_t blk = 0; blk < w.k_blocks; ++blk) p.scaled_sum[blk] = a.scale[blk] * static_cast<float>(a.sum[blk]);
}

// Σ_blocks scale_w · zp · scale_a · Σ q_a of one row.
inline float ZeroPointCorrection(const NBitsView& w, const PreparedRow& p, int64_t row) {
  const float* ws = w.scales + row * w.k_blocks;
  const __m512 symmetric = _mm512_set1_ps(static_cast<float>(w.ZeroPointInt(row, 0)));
  __m512 acc = _mm512_setzero_ps();
  for (int64_t blk = 0; blk < w.k_blocks; blk += 16) {
    const __mmask16 m = Mask16(w.k_blocks - blk);
    __m512 zp = symmetric;
    if (w.zero_points_u8 != nullptr)
      zp = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, w.zero_points_u8 + row * w.k_blocks + blk)));
    acc = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, ws + blk), zp),
                          _mm512_maskz_loadu_ps(m, p.scaled_sum.data() + blk), acc);
  }
  return _mm512_reduce_add_ps(acc);
}

// Outputs n .. n + R − 1; R rows share each load of A.
template <int R>
void Rows4Bit(const NBitsView& w, const PreparedRow& p, int64_t chunks, int64_t n, float* y) {
  const int64_t row_bytes = w.k_blocks * w.blob_size;
  const int64_t blocks_per_chunk = std::max<int64_t>(1, 128 / w.block_size);
  // Lane l of a chunk lies in block first + l · 8 / block_size (first when blocks are 128 or longer).
  const __m512i lane_block = w.block_size >= 128 ? _mm512_setzero_si512()
                                                 : _mm512_srlv_epi32(_mm512_setr_epi32(0, 8, 16, 24, 32, 40, 48, 56, 64,
                                                                                       72, 80, 88, 96, 104, 112, 120),
                                                                     _mm512_set1_epi32(__builtin_ctzll(w.block_size)));
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t c = 0; c < chunks; ++c) {
    // Plain loads where the chunk is whole: masked loads that miss the cache stall here.
    const bool whole = 64 * (c + 1) <= row_bytes;
    const __mmask64 bytes = Mask64(row_bytes - 64 * c);
    const __m512i a_even = _mm512_loadu_si512(p.even.data() + 64 * c);
    const __m512i a_odd = _mm512_loadu_si512(p.odd.data() + 64 * c);
    const __m512 a_scale = _mm512_loadu_ps(p.lane_scale.data() + 16 * c);
    const int64_t first = 128 * c / w.block_size;
    const __mmask16 scales_in_chunk = Mask16(std::min(blocks_per_chunk, w.k_blocks - first));
    for (int r = 0; r < R; ++r) {
      const uint8_t* src = w.b + (n + r) * row_bytes + 64 * c;
      // The next rows' bytes at the same place: the rows of a product stream from memory.
      _mm_prefetch(reinterpret_cast<const char*>(src + R * row_bytes), _MM_HINT_T0);
      const __m512i v = whole ? _mm512_loadu_si512(src) : _mm512_maskz_loadu_epi8(bytes, src);
      const __m512i lo = _mm512_and_si512(v, nibble);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
      const __m512i dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, a_even), hi, a_odd);
      const int64_t at = (n + r) * w.k_blocks + first;
      const __m512 w_scale = _mm512_permutexvar_ps(
          lane_block, at + 16 <= w.n * w.k_blocks ? _mm512_loadu_ps(w.scales + at)
                                                  : _mm512_maskz_loadu_ps(scales_in_chunk, w.scales + at));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(w_scale, a_scale), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) y[r] = _mm512_reduce_add_ps(acc[r]) - ZeroPointCorrection(w, p, n + r);
}

void GemvInt8FourBit(const NBitsView& w, const Int8Row& a, float* y, int64_t n0, int64_t n1) {
  const int64_t chunks = (w.k_blocks * w.blob_size + 63) / 64;
  thread_local PreparedRow p;
  Prepare(w, a, chunks, p);
  int64_t n = n0;
  for (; n + 4 <= n1; n += 4) Rows4Bit<4>(w, p, chunks, n, y + (n - n0));
  for (; n < n1; ++n) Rows4Bit<1>(w, p, chunks, n, y + (n - n0));
}

}  // namespace

void GemvInt8Avx512Vnni(const NBitsView& w, const Int8Row& a, float* y, int64_t n0, int64_t n1) {
  if (w.bits == 4 && w.block_size >= 16 && w.zero_points_f32 == nullptr) return GemvInt8FourBit(w, a, y, n0, n1);
  GemvInt8Impl<VnniDot>(w, a, y, n0, n1);
}

}  // namespace attune::quantized
