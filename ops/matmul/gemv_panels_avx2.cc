// The panel GEMV with ymm registers: a row's 64 outputs of one panel are eight
// accumulators. Weights are read as FMA memory operands, so one row needs nine
// of the sixteen registers; more rows spill accumulators to L1, which costs
// nothing next to streaming the panel from memory.
#include <immintrin.h>

#include <algorithm>

#include "ops/matmul/gemv_panels.h"

namespace attune::gemv_panels_detail {
namespace {

constexpr int kVectors = kSimdPanelCols / 8;

template <int M>
void Panel(const Problem& p, int64_t panel) {
  const PanelLayout& w = *p.layout;
  const float* base = p.weights + panel * w.panel_stride;
  __m256 acc[M][kVectors];
  for (int r = 0; r < M; ++r)
    for (int j = 0; j < kVectors; ++j) acc[r][j] = _mm256_setzero_ps();
  // Blocks are walked by pointer: a division per row would cost more than
  // the row's FMAs when blocks are single rows (the row-major case).
  const float* block = base;
  for (int64_t k0 = 0; k0 < w.k; k0 += w.block_rows, block += w.block_stride) {
    const float* row = block;
    const int64_t rows = std::min(w.block_rows, w.k - k0);
    for (int64_t kk = 0; kk < rows; ++kk, row += kSimdPanelCols) {
      for (int r = 0; r < M; ++r) {
        const __m256 x = _mm256_set1_ps(p.a[r * w.k + k0 + kk]);
        for (int j = 0; j < kVectors; ++j) acc[r][j] = _mm256_fmadd_ps(x, _mm256_loadu_ps(row + 8 * j), acc[r][j]);
      }
    }
  }
  const int64_t n0 = panel * kSimdPanelCols;
  const int64_t cols = std::min<int64_t>(kSimdPanelCols, w.n - n0);
  for (int r = 0; r < M; ++r) {
    alignas(32) float out[kSimdPanelCols];
    for (int j = 0; j < kVectors; ++j) _mm256_store_ps(out + 8 * j, acc[r][j]);
    for (int64_t j = 0; j < cols; ++j) p.c[r * w.n + n0 + j] = out[j] + (p.bias != nullptr ? p.bias[n0 + j] : 0.0f);
  }
}

template <int M>
void Panels(const Problem& p, int64_t first, int64_t last) {
  for (int64_t panel = first; panel < last; ++panel) {
    if (FullWidth(*p.layout, panel))
      Panel<M>(p, panel);
    else
      PanelRangeGeneric(p, panel, panel + 1);
  }
}

}  // namespace

void PanelRangeAvx2(const Problem& p, int64_t first, int64_t last) {
  switch (p.m) {
    case 1: return Panels<1>(p, first, last);
    case 2: return Panels<2>(p, first, last);
    case 3: return Panels<3>(p, first, last);
    case 4: return Panels<4>(p, first, last);
    default: return PanelRangeGeneric(p, first, last);
  }
}

}  // namespace attune::gemv_panels_detail
