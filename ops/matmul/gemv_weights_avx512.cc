// The panel GEMV for more rows of A than four, with zmm FMAs (Zen 5 runs
// them at full width: twice the ymm rate, which these products need once
// eight or sixteen rows share each weight). A tile is up to kTileRows rows of
// A × the panel's 64 columns (four zmm accumulators per row) walking the
// panel front to back: the first tile streams it from memory, the others
// find it in L2 (192 KB at K = 768). Each output is the chain of FMAs over k,
// in order, from zero, with the bias added last, as the ymm Panel computes
// it: a row's result does not depend on how many rows share the product.
#include <immintrin.h>

#include <algorithm>

#include "ops/matmul/gemv_weights.h"

namespace attune::gemv_weights_detail {
namespace {

constexpr int kVectors = kSimdPanelCols / 16;
constexpr int kTileRows = 6;  // 24 accumulators, four weight vectors, one broadcast

// The last tile of a panel prefetches the next panel (the same offset one
// panel_stride on), so that memory keeps streaming while tiles compute from
// L2 and the next panel's first tile finds it there.
template <int R, bool kFetchNext>
void Tile(const Problem& p, int64_t panel, int64_t row0) {
  const PanelLayout& w = *p.layout;
  __m512 acc[R][kVectors];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_setzero_ps();
  const float* a = p.a + row0 * w.k;
  const float* block = p.weights + panel * w.panel_stride;
  for (int64_t k0 = 0; k0 < w.k; k0 += w.block_rows, block += w.block_stride) {
    const float* row = block;
    const int64_t rows = std::min(w.block_rows, w.k - k0);
    for (int64_t kk = 0; kk < rows; ++kk, row += kSimdPanelCols) {
      __m512 wv[kVectors];
      for (int v = 0; v < kVectors; ++v) wv[v] = _mm512_loadu_ps(row + 16 * v);
      if constexpr (kFetchNext)
        for (int v = 0; v < kVectors; ++v)
          _mm_prefetch(reinterpret_cast<const char*>(row + w.panel_stride + 16 * v), _MM_HINT_T1);
      for (int r = 0; r < R; ++r) {
        const __m512 x = _mm512_set1_ps(a[r * w.k + k0 + kk]);
        for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_fmadd_ps(x, wv[v], acc[r][v]);
      }
    }
  }
  const int64_t n0 = panel * kSimdPanelCols;
  const int64_t cols = std::min<int64_t>(kSimdPanelCols, w.n - n0);
  for (int r = 0; r < R; ++r) {
    alignas(64) float out[kSimdPanelCols];
    for (int v = 0; v < kVectors; ++v) _mm512_store_ps(out + 16 * v, acc[r][v]);
    float* c = p.c + (row0 + r) * w.n + n0;
    for (int64_t j = 0; j < cols; ++j) c[j] = out[j] + (p.bias != nullptr ? p.bias[n0 + j] : 0.0f);
  }
}

template <bool kFetchNext>
void RunTile(const Problem& p, int64_t panel, int64_t row0, int64_t rows) {
  switch (rows) {
    case 6: return Tile<6, kFetchNext>(p, panel, row0);
    case 5: return Tile<5, kFetchNext>(p, panel, row0);
    case 4: return Tile<4, kFetchNext>(p, panel, row0);
    case 3: return Tile<3, kFetchNext>(p, panel, row0);
    case 2: return Tile<2, kFetchNext>(p, panel, row0);
    default: return Tile<1, kFetchNext>(p, panel, row0);
  }
}

}  // namespace

void PanelRangeAvx512ManyRows(const Problem& p, int64_t first, int64_t last) {
  // Rows split evenly over the fewest tiles (8 rows: 4 + 4, 16: 6 + 5 + 5).
  const int64_t tiles = (p.m + kTileRows - 1) / kTileRows;
  for (int64_t panel = first; panel < last; ++panel) {
    if (!FullWidth(*p.layout, panel)) {
      PanelRangeGeneric(p, panel, panel + 1);
      continue;
    }
    for (int64_t t = 0, row0 = 0; t < tiles; ++t) {
      const int64_t rows = (p.m - row0 + (tiles - t) - 1) / (tiles - t);
      // One tile alone streams its panel; the prefetch pays where others follow.
      if (t == tiles - 1 && tiles > 1 && panel + 1 < last)
        RunTile<true>(p, panel, row0, rows);
      else
        RunTile<false>(p, panel, row0, rows);
      row0 += rows;
    }
  }
}

}  // namespace attune::gemv_weights_detail
