// The AVX-512 panels of GemmTransposed (gemm_transposed.h).
// GCC 12 warns about _mm512_undefined_ps() inside its own intrinsics headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <algorithm>

#include "ops/matmul/gemm_transposed.h"

namespace attune::gemm_transposed_detail {
namespace {

constexpr int kVectors = kPanelCols / 16;

struct ColumnMasks {
  __mmask16 lane[kVectors];
};

ColumnMasks MasksFor(int64_t cols) {
  ColumnMasks masks;
  for (int j = 0; j < kVectors; ++j) {
    const int64_t valid = std::clamp<int64_t>(cols - 16 * j, 0, 16);
    masks.lane[j] = static_cast<__mmask16>((uint32_t{1} << valid) - 1);
  }
  return masks;
}

// out[c · 64 + j] = r[j][c] for j, c < 16: a 16 x 16 transpose in registers
// (interleave pairs of rows, then pairs of pairs, then 128-bit lanes twice).
void Transpose16(const __m512 r[16], float* out) {
  __m512 t[16], u[16], v[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  // u[4g + q] holds, in each 128-bit lane L, column 4L + q of rows 4g..4g+3.
  for (int g = 0; g < 4; ++g) {
    const __m512 *lo = &t[4 * g], *hi = &t[4 * g + 2];
    u[4 * g + 0] = _mm512_shuffle_ps(lo[0], hi[0], 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(lo[0], hi[0], 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(lo[1], hi[1], 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(lo[1], hi[1], 0xEE);
  }
  // v[q] (rows 0-7) and v[8 + q] (rows 8-15): lanes 0 and 2 of two row
  // quads; v[4 + q], v[12 + q]: lanes 1 and 3.
  for (int h = 0; h < 2; ++h)
    for (int q = 0; q < 4; ++q) {
      v[8 * h + q] = _mm512_shuffle_f32x4(u[8 * h + q], u[8 * h + 4 + q], 0x88);
      v[8 * h + 4 + q] = _mm512_shuffle_f32x4(u[8 * h + q], u[8 * h + 4 + q], 0xDD);
    }
  for (int q = 0; q < 8; ++q) {
    _mm512_storeu_ps(out + q * kPanelCols, _mm512_shuffle_f32x4(v[q], v[8 + q], 0x88));
    _mm512_storeu_ps(out + (8 + q) * kPanelCols, _mm512_shuffle_f32x4(v[q], v[8 + q], 0xDD));
  }
}

// panel[kk · 64 + j] = b[n0 + j][k0 + kk] for kk < kc, j < 64; zero for rows
// of B past N.
void Pack(const Problem& p, int64_t n0, int64_t k0, int64_t kc, float* panel) {
  const int64_t rows = std::min(kPanelCols, p.n - n0);
  const int64_t whole = kc / 16 * 16;
  for (int64_t j0 = 0; j0 < kPanelCols; j0 += 16) {
    const float* src[16];
    for (int j = 0; j < 16; ++j) src[j] = j0 + j < rows ? p.b + (n0 + j0 + j) * p.k + k0 : nullptr;
    for (int64_t kk = 0; kk < whole; kk += 16) {
      __m512 r[16];
      for (int j = 0; j < 16; ++j) r[j] = src[j] != nullptr ? _mm512_loadu_ps(src[j] + kk) : _mm512_setzero_ps();
      Transpose16(r, panel + kk * kPanelCols + j0);
    }
    for (int64_t kk = whole; kk < kc; ++kk)
      for (int j = 0; j < 16; ++j) panel[kk * kPanelCols + j0 + j] = src[j] != nullptr ? src[j][kk] : 0.0f;
  }
}

// c[r][0, 64) of R rows = (init ? 0 : c) + a[r][0, kc) · panel[kc, 64],
// columns outside `masks` neither read nor written. R · 4 accumulators, the
// four vectors of a panel row and one broadcast: at R = 6, 29 of the 32
// registers.
template <int R>
void Tile(const float* a, int64_t lda, const float* panel, int64_t kc, float* c, int64_t ldc, bool init,
          const ColumnMasks& masks) {
  __m512 acc[R][kVectors];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < kVectors; ++j)
      acc[r][j] = init ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(masks.lane[j], c + r * ldc + 16 * j);
  for (int64_t k = 0; k < kc; ++k, panel += kPanelCols) {
    __m512 w[kVectors];
    for (int j = 0; j < kVectors; ++j) w[j] = _mm512_load_ps(panel + 16 * j);
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * lda + k]);
      for (int j = 0; j < kVectors; ++j) acc[r][j] = _mm512_fmadd_ps(x, w[j], acc[r][j]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < kVectors; ++j) _mm512_mask_storeu_ps(c + r * ldc + 16 * j, masks.lane[j], acc[r][j]);
}

// Tile<rows> for the last rows of A (1 ≤ rows < kTileRows).
template <int R = kTileRows - 1>
void EdgeTile(int64_t rows, const float* a, int64_t lda, const float* panel, int64_t kc, float* c, int64_t ldc,
              bool init, const ColumnMasks& masks) {
  if constexpr (R > 0) {
    if (rows == R) return Tile<R>(a, lda, panel, kc, c, ldc, init, masks);
    EdgeTile<R - 1>(rows, a, lda, panel, kc, c, ldc, init, masks);
  }
}

// Brings the block of B the next Pack reads (up to 64 rows of kc floats, K
// apart) into L2 while the tiles of the current block run, a share per tile:
// B streams from memory once per product (GPT-2's head: 154 MB), and
// without it each Pack waited for its rows.
class NextBlockPrefetch {
 public:
  NextBlockPrefetch(const Problem& p, int64_t n0, int64_t k0, int64_t kc, int64_t steps)
      : p_(p), n0_(n0), k0_(k0) {
    rows_ = n0 < p.n ? std::min(kPanelCols, p.n - n0) : 0;
    // Lines a row spans, one more for a row that does not start on a line.
    lines_per_row_ = (kc * static_cast<int64_t>(sizeof(float)) + 63) / 64 + 1;
    per_step_ = steps > 0 ? (rows_ * lines_per_row_ + steps - 1) / steps : 0;
  }

  void Step() {
    for (int64_t i = 0; i < per_step_ && row_ < rows_; ++i) {
      const char* row = reinterpret_cast<const char*>(p_.b + (n0_ + row_) * p_.k + k0_);
      _mm_prefetch(row + 64 * line_, _MM_HINT_T1);
      if (++line_ == lines_per_row_) line_ = 0, ++row_;
    }
  }

 private:
  const Problem& p_;
  int64_t n0_, k0_;
  int64_t rows_ = 0, lines_per_row_ = 0, per_step_ = 0;
  int64_t row_ = 0, line_ = 0;
};

}  // namespace

void PanelRangeAvx512(const Problem& p, int64_t first, int64_t last, float* panel) {
  const int64_t depth_blocks = (p.k + kMaxDepth - 1) / kMaxDepth;
  for (int64_t index = first; index < last; ++index) {
    const int64_t n0 = index * kPanelCols;
    const ColumnMasks masks = MasksFor(p.n - n0);
    for (int64_t kb = 0; kb < depth_blocks; ++kb) {
      const int64_t k0 = p.k * kb / depth_blocks, kc = p.k * (kb + 1) / depth_blocks - k0;
      Pack(p, n0, k0, kc, panel);
      const bool init = kb == 0;
      // A last tile of one to three rows reuses each panel load too little:
      // the last full tile and it go as two tiles of three to five rows.
      const int64_t rest = p.m % kTileRows;
      const int64_t full = p.m / kTileRows - (rest > 0 && rest < kTileRows / 2 && p.m > kTileRows ? 1 : 0);
      // The block after this one: the next depth block, or the next panel's first.
      const bool last_depth = kb + 1 == depth_blocks;
      const int64_t next_n0 = last_depth ? (index + 1 < last ? n0 + kPanelCols : p.n) : n0;
      const int64_t next_kb = last_depth ? 0 : kb + 1;
      const int64_t next_k0 = p.k * next_kb / depth_blocks;
      NextBlockPrefetch prefetch(p, next_n0, next_k0, p.k * (next_kb + 1) / depth_blocks - next_k0,
                                 (p.m + kTileRows - 1) / kTileRows);
      int64_t i = 0;
      for (; i < full * kTileRows; i += kTileRows) {
        Tile<kTileRows>(p.a + i * p.k + k0, p.k, panel, kc, p.c + i * p.n + n0, p.n, init, masks);
        prefetch.Step();
      }
      while (i < p.m) {
        const int64_t left = p.m - i;
        const int64_t rows = left < kTileRows ? left : (left + 1) / 2;
        EdgeTile(rows, p.a + i * p.k + k0, p.k, panel, kc, p.c + i * p.n + n0, p.n, init, masks);
        prefetch.Step();
        i += rows;
      }
    }
  }
}

}  // namespace attune::gemm_transposed_detail
