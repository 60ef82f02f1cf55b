// AVX-512 VNNI int8 prefill product of the N-bit weights (accuracy_level 4).
//
// Per panel of 48 outputs, the weights are unpacked once into signed bytes,
// column after column (K contiguous, padded to whole blocks): q − zp for 4 bits, q − 128 for
// 8 bits, with per block the column's sum of them. A is unsigned (q_a + 128),
// 16 rows × 4 k per zmm, so vpdpbusd takes A as its unsigned operand and a
// broadcast dword of one column (4 k) as the signed one:
//   Σ (q_a + 128) · b = Σ q_a · b + 128 · Σ b,
// and the int32 accumulator of each block starts at −128 · Σ b, so it ends at
// Σ q_a · b exactly. 8-bit weights with zero points add (128 − zp) · Σ q_a.
// A tile is 32 rows (two zmm) × 6 columns: 12 int32 accumulators per block,
// 12 float32 ones over the blocks (y += fl(scale_a · scale_w) · dot, in block
// order), so an output's bits depend neither on the tile, the panel, the
// number of rows nor the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/quantized/nbits_int8_impl.h"
#include "ops/quantized/nbits_prefill.h"

namespace attune::quantized {
namespace {

constexpr int kTileColumns = 6;
constexpr int64_t kGroup = PackedInt8Rows::kGroupRows;
// Largest block whose int32 sums cannot overflow: (255 · 255 + 128 · 255) · block < 2^31.
constexpr int64_t kMaxBlock = 16384;

bool Supports(const NBitsView& w) {
  return (w.bits == 4 || w.bits == 8) && w.block_size >= 32 && w.block_size % 32 == 0 &&
         w.block_size <= kMaxBlock && w.zero_points_f32 == nullptr;
}

// acc += Σ4 u8 · s8 per dword. GCC 12 copies the accumulator around each
// _mm512_dpbusd_epi32 in an unrolled loop (two moves per product); as an asm
// statement on a register it stays in place.
inline void DotAdd(__m512i& acc, __m512i u8, __m512i s8) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "v"(s8));
}

inline __mmask16 Mask16(int64_t len) {
  return len >= 16 ? 0xFFFF : len <= 0 ? 0 : static_cast<__mmask16>((1u << len) - 1);
}

// QuantizeRowInt8's arithmetic, 16 values at a time: the same products and
// round-to-nearest-even, so the same bytes.
bool PackRow(const float* a, const NBitsView& w, int64_t row, PackedInt8Rows& dst) {
  const int64_t bs = w.block_size, kb = w.k_blocks, g = row / kGroup, lane = row % kGroup;
  uint8_t* base = dst.q.data() + g * dst.quads * 64 + lane * 4;
  float* scale = dst.scale.data() + g * kb * kGroup + lane;
  int32_t* sum = dst.sum.data() + g * kb * kGroup + lane;
  const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
  for (int64_t blk = 0; blk < kb; ++blk) {
    const int64_t k0 = blk * bs, len = std::min(bs, w.k - k0);
    __m512 amax_v = _mm512_setzero_ps();
    __mmask16 nan = 0;
    for (int64_t i = 0; i < len; i += 16) {
      const __m512 x = _mm512_maskz_loadu_ps(Mask16(len - i), a + k0 + i);
      nan |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
      amax_v = _mm512_max_ps(amax_v, _mm512_and_ps(x, abs_mask));
    }
    const float amax = _mm512_reduce_max_ps(amax_v);
    if (nan != 0 || !std::isfinite(amax)) return false;
    const __m512 inv = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    __m512i total = _mm512_setzero_si512();
    for (int64_t i = 0; i < bs; i += 16) {
      const __m512 x = _mm512_maskz_loadu_ps(Mask16(len - i), a + k0 + i);
      __m512 v = _mm512_roundscale_ps(_mm512_mul_ps(x, inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f));
      const __m512i qi = _mm512_cvtps_epi32(v);
      total = _mm512_add_epi32(total, qi);
      const __m128i bytes = _mm_xor_si128(_mm512_cvtepi32_epi8(qi), _mm_set1_epi8(static_cast<char>(0x80)));
      uint8_t* out = base + (k0 + i) / 4 * 64;
      alignas(16) uint32_t quads[4];
      _mm_store_si128(reinterpret_cast<__m128i*>(quads), bytes);
      for (int j = 0; j < 4; ++j) std::memcpy(out + j * 64, &quads[j], 4);
    }
    scale[blk * kGroup] = amax / 127.0f;
    sum[blk * kGroup] = _mm512_reduce_add_epi32(total);
  }
  return true;
}

// One panel of columns unpacked (see the top of the file).
struct Panel {
  int64_t k_padded = 0;
  std::vector<int8_t> b;         // [columns][k_padded]
  std::vector<int32_t> offset;   // [columns][k_blocks]: −128 · Σ b over the block
  std::vector<int32_t> zp_delta; // [columns][k_blocks]: 128 − zp (8 bits with zero points)
  std::vector<float> scale;      // [columns][k_blocks]; 0 for columns past N
};

void UnpackColumn(const NBitsView& w, int64_t n, int64_t col, Panel& p) {
  const int64_t bs = w.block_size, kb = w.k_blocks;
  int8_t* dst = p.b.data() + col * p.k_padded;
  for (int64_t blk = 0; blk < kb; ++blk) {
    const uint8_t* blob = w.Blob(n, blk);
    const int zp = w.ZeroPointInt(n, blk);
    const int center = w.bits == 4 ? zp : 128;
    const __m256i center_v = _mm256_set1_epi8(static_cast<char>(center));
    int8_t* d = dst + blk * bs;
    __m256i q_sum = _mm256_setzero_si256();
    for (int64_t kk = 0; kk < bs; kk += 32) {
      const __m256i q = Load32Weights(blob, kk, w.bits);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + kk), _mm256_sub_epi8(q, center_v));
      q_sum = _mm256_add_epi64(q_sum, _mm256_sad_epu8(q, _mm256_setzero_si256()));
    }
    // The padding of a last partial block meets q_a = 0: its Σ q_a · b is 0 and its share of Σ b cancels.
    const int64_t total = _mm256_extract_epi64(q_sum, 0) + _mm256_extract_epi64(q_sum, 1) +
                          _mm256_extract_epi64(q_sum, 2) + _mm256_extract_epi64(q_sum, 3) - int64_t{center} * bs;
    p.offset[col * kb + blk] = static_cast<int32_t>(-128 * total);
    p.zp_delta[col * kb + blk] = 128 - zp;
    p.scale[col * kb + blk] = w.scales[n * kb + blk];
  }
}

void UnpackPanel(const NBitsView& w, int64_t n0, int64_t columns, Panel& p) {
  const int64_t kb = w.k_blocks, padded_columns = (columns + kTileColumns - 1) / kTileColumns * kTileColumns;
  p.k_padded = kb * w.block_size;
  p.b.resize(padded_columns * p.k_padded);
  p.offset.resize(padded_columns * kb);
  p.zp_delta.resize(padded_columns * kb);
  p.scale.resize(padded_columns * kb);
  for (int64_t c = 0; c < columns; ++c) UnpackColumn(w, n0 + c, c, p);
  for (int64_t c = columns; c < padded_columns; ++c) {
    std::fill_n(p.b.data() + c * p.k_padded, p.k_padded, int8_t{0});
    std::fill_n(p.offset.data() + c * kb, kb, 0);
    std::fill_n(p.zp_delta.data() + c * kb, kb, 0);
    std::fill_n(p.scale.data() + c * kb, kb, 0.0f);
  }
}

// Rows of groups g0 .. g0 + V − 1 against columns c0 .. c0 + 5 of the panel;
// out[c][r] for the V · 16 rows.
template <int V, bool kZeroPointRows>
void Tile(const NBitsView& w, const PackedInt8Rows& a, int64_t g0, const Panel& p, int64_t c0, float* out) {
  constexpr int C = kTileColumns;
  const int64_t kb = w.k_blocks, quads_per_block = w.block_size / 4;
  const uint8_t* rows[V];
  for (int v = 0; v < V; ++v) rows[v] = a.q.data() + (g0 + v) * a.quads * 64;
  const int8_t* cols = p.b.data() + c0 * p.k_padded;
  __m512 acc[V][C];
  for (int v = 0; v < V; ++v)
    for (int c = 0; c < C; ++c) acc[v][c] = _mm512_setzero_ps();
  for (int64_t blk = 0; blk < kb; ++blk) {
    __m512i dot[V][C];
    for (int c = 0; c < C; ++c) {
      const __m512i start = _mm512_set1_epi32(p.offset[(c0 + c) * kb + blk]);
      for (int v = 0; v < V; ++v) dot[v][c] = start;
    }
    for (int64_t q = blk * quads_per_block; q < (blk + 1) * quads_per_block; ++q) {
      __m512i av[V];
      for (int v = 0; v < V; ++v) av[v] = _mm512_loadu_si512(rows[v] + q * 64);
      for (int c = 0; c < C; ++c) {
        int32_t quad;
        std::memcpy(&quad, cols + c * p.k_padded + q * 4, 4);
        const __m512i bv = _mm512_set1_epi32(quad);
        for (int v = 0; v < V; ++v) DotAdd(dot[v][c], av[v], bv);
      }
    }
    for (int v = 0; v < V; ++v) {
      const int64_t at = ((g0 + v) * kb + blk) * kGroup;
      if constexpr (kZeroPointRows) {
        const __m512i q_sum = _mm512_loadu_si512(a.sum.data() + at);
        for (int c = 0; c < C; ++c)
          dot[v][c] = _mm512_add_epi32(
              dot[v][c], _mm512_mullo_epi32(q_sum, _mm512_set1_epi32(p.zp_delta[(c0 + c) * kb + blk])));
      }
      const __m512 a_scale = _mm512_loadu_ps(a.scale.data() + at);
      for (int c = 0; c < C; ++c) {
        const __m512 s = _mm512_mul_ps(a_scale, _mm512_set1_ps(p.scale[(c0 + c) * kb + blk]));
        acc[v][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[v][c]), s, acc[v][c]);
      }
    }
  }
  for (int c = 0; c < C; ++c)
    for (int v = 0; v < V; ++v) _mm512_storeu_ps(out + c * (V * kGroup) + v * kGroup, acc[v][c]);
}

template <bool kZeroPointRows>
void MultiplyPanel(const NBitsView& w, const PackedInt8Rows& a, const Panel& p, int64_t n0, int64_t columns,
                   float* y) {
  float out[kTileColumns * 2 * kGroup];
  for (int64_t g = 0; g < a.groups; g += 2) {
    const int v = a.groups - g >= 2 ? 2 : 1;
    const int64_t r0 = g * kGroup, rows = std::min<int64_t>(v * kGroup, a.rows - r0);
    for (int64_t c0 = 0; c0 < columns; c0 += kTileColumns) {
      if (v == 2) Tile<2, kZeroPointRows>(w, a, g, p, c0, out);
      else Tile<1, kZeroPointRows>(w, a, g, p, c0, out);
      const int64_t cols = std::min<int64_t>(kTileColumns, columns - c0);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) y[(r0 + r) * w.n + n0 + c0 + c] = out[c * (v * kGroup) + r];
    }
  }
}

void Multiply(const NBitsView& w, const PackedInt8Rows& a, int64_t p0, int64_t p1, float* y) {
  thread_local Panel panel;
  // 8-bit weights with zero points other than 128 need the per-row term.
  const bool zero_point_rows = w.bits == 8 && w.zero_points_u8 != nullptr;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t n0 = p * kPrefillPanelColumns, columns = std::min(kPrefillPanelColumns, w.n - n0);
    UnpackPanel(w, n0, columns, panel);
    if (zero_point_rows) MultiplyPanel<true>(w, a, panel, n0, columns, y);
    else MultiplyPanel<false>(w, a, panel, n0, columns, y);
  }
}

}  // namespace

const NBitsPrefillKernels kNBitsPrefillAvx512Vnni = {"avx512vnni", Supports, PackRow, Multiply};

}  // namespace attune::quantized
