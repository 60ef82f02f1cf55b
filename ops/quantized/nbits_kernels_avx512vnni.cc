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
  std::vector<int8_t> even, odd;  // [chunks · 64]
  std::vector<float> lane_scale;  // [chunks · 16]
  std::vector<float> scaled_sum;  // [k_blocks]
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
  const int log2_block = __builtin_ctzll(w.block_size);  // a power of two (checked at load)
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t l = 0; l < 16; ++l) {
      const int64_t blk = (128 * c + 8 * l) >> log2_block;
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

// The prepared row as plain pointers: passed by value, so the hot loops read
// no thread_local (whose address a shared library fetches with a call).
struct PreparedPointers {
  const int8_t* even;
  const int8_t* odd;
  const float* lane_scale;
};

// The weight scales of one whole chunk (128 weights), kBlocks = 128 /
// block_size of them (1 for blocks of 128 or more: the chunk's own block), in
// the low lanes; the permute by lane_block spreads them. Plain loads of exactly
// what the chunk owns.
template <int kBlocks>
inline __m512 ChunkScales(const float* s) {
  if constexpr (kBlocks == 8) return _mm512_castps256_ps512(_mm256_loadu_ps(s));
  if constexpr (kBlocks == 4) return _mm512_castps128_ps512(_mm_loadu_ps(s));
  if constexpr (kBlocks == 2)
    return _mm512_castps128_ps512(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s))));
  return _mm512_set1_ps(*s);
}

// The dot products of one 64-byte chunk of a row (128 weights) with A's even
// and odd elements.
inline __m512i ChunkDot(__m512i v, __m512i a_even, __m512i a_odd) {
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const __m512i lo = _mm512_and_si512(v, nibble);
  const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
  return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, a_even), hi, a_odd);
}

// Lane l of a chunk lies in block first + l · 8 / block_size (first when blocks
// are 128 or longer).
inline __m512i LaneBlock(int64_t block_size) {
  if (block_size >= 128) return _mm512_setzero_si512();
  return _mm512_srlv_epi32(_mm512_setr_epi32(0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120),
                           _mm512_set1_epi32(__builtin_ctzll(block_size)));
}

// Outputs n .. n + R − 1; R rows share each load of A. Whole chunks take plain
// loads in a loop free of masks and divisions; a row's last, partial chunk (K
// not a multiple of 128) takes masked loads. Per lane: acc += float(dot) ·
// (scale_w · scale_a), chunk after chunk, then one reduction per output.
template <int R, int kBlocks>
void Rows4Bit(const NBitsView& w, PreparedPointers p, int64_t chunks, int64_t n, float* y) {
  const int64_t row_bytes = w.k_blocks * w.blob_size, whole = row_bytes / 64;
  const int log2_block = __builtin_ctzll(w.block_size);
  const __m512i lane_block = LaneBlock(w.block_size);
  const uint8_t* src[R];
  const float* ws[R];
  __m512 acc[R];
  for (int r = 0; r < R; ++r) {
    src[r] = w.b + (n + r) * row_bytes;
    ws[r] = w.scales + (n + r) * w.k_blocks;
    acc[r] = _mm512_setzero_ps();
  }
  // The rows after these, R · row_bytes ahead: the rows of a product stream
  // from memory.
  const int64_t ahead = R * row_bytes;
  // Their block scales too: a second stream (R · k_blocks floats) the loop reads 16 bytes at a time.
  if (n + 2 * R <= w.n) {
    const char* next_scales = reinterpret_cast<const char*>(ws[0] + R * w.k_blocks);
    for (int64_t i = 0; i < R * w.k_blocks * 4; i += 64) _mm_prefetch(next_scales + i, _MM_HINT_T0);
  }
  for (int64_t c = 0; c < whole; ++c) {
    const __m512i a_even = _mm512_loadu_si512(p.even + 64 * c);
    const __m512i a_odd = _mm512_loadu_si512(p.odd + 64 * c);
    const __m512 a_scale = _mm512_loadu_ps(p.lane_scale + 16 * c);
    const int64_t first = (128 * c) >> log2_block;
    for (int r = 0; r < R; ++r) {
      const uint8_t* at = src[r] + 64 * c;
      _mm_prefetch(reinterpret_cast<const char*>(at + ahead), _MM_HINT_T0);
      const __m512i dot = ChunkDot(_mm512_loadu_si512(at), a_even, a_odd);
      const __m512 w_scale = _mm512_permutexvar_ps(lane_block, ChunkScales<kBlocks>(ws[r] + first));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(w_scale, a_scale), acc[r]);
    }
  }
  if (whole < chunks) {
    const int64_t c = whole, first = (128 * c) >> log2_block;
    const __mmask64 bytes = Mask64(row_bytes - 64 * c);
    const __mmask16 scales_in_chunk = Mask16(w.k_blocks - first);
    const __m512i a_even = _mm512_loadu_si512(p.even + 64 * c);
    const __m512i a_odd = _mm512_loadu_si512(p.odd + 64 * c);
    const __m512 a_scale = _mm512_loadu_ps(p.lane_scale + 16 * c);
    for (int r = 0; r < R; ++r) {
      const __m512i dot = ChunkDot(_mm512_maskz_loadu_epi8(bytes, src[r] + 64 * c), a_even, a_odd);
      const __m512 w_scale = _mm512_permutexvar_ps(lane_block, _mm512_maskz_loadu_ps(scales_in_chunk, ws[r] + first));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(w_scale, a_scale), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) y[r] = _mm512_reduce_add_ps(acc[r]);
}

// Eight outputs at a time (then four, then one): each chunk of A is loaded once
// for eight rows of W; an output's bits do not depend on its group.
template <int kBlocks>
void RowsOfCall(const NBitsView& w, PreparedPointers p, int64_t chunks, int64_t n0, int64_t n1, float* y) {
  int64_t n = n0;
  for (; n + 8 <= n1; n += 8) Rows4Bit<8, kBlocks>(w, p, chunks, n, y + (n - n0));
  for (; n + 4 <= n1; n += 4) Rows4Bit<4, kBlocks>(w, p, chunks, n, y + (n - n0));
  for (; n < n1; ++n) Rows4Bit<1, kBlocks>(w, p, chunks, n, y + (n - n0));
}

void GemvInt8FourBit(const NBitsView& w, const Int8Row& a, float* y, int64_t n0, int64_t n1) {
  const int64_t chunks = (w.k_blocks * w.blob_size + 63) / 64;
  thread_local PreparedRow prepared;
  Prepare(w, a, chunks, prepared);
  const PreparedPointers p{prepared.even.data(), prepared.odd.data(), prepared.lane_scale.data()};
  switch (w.block_size) {
    case 16:
      RowsOfCall<8>(w, p, chunks, n0, n1, y);
      break;
    case 32:
      RowsOfCall<4>(w, p, chunks, n0, n1, y);
      break;
    case 64:
      RowsOfCall<2>(w, p, chunks, n0, n1, y);
      break;
    default:
      RowsOfCall<1>(w, p, chunks, n0, n1, y);
      break;
  }
  for (int64_t n = n0; n < n1; ++n) y[n - n0] -= ZeroPointCorrection(w, prepared, n);
}

}  // namespace

void GemvInt8Avx512Vnni(const NBitsView& w, const Int8Row& a, float* y, int64_t n0, int64_t n1) {
  if (w.bits == 4 && w.block_size >= 16 && w.zero_points_f32 == nullptr) return GemvInt8FourBit(w, a, y, n0, n1);
  GemvInt8Impl<VnniDot>(w, a, y, n0, n1);
}

}  // namespace attune::quantized
