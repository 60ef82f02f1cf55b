// The panel GEMV with zmm registers: a row's 64 outputs of one panel are four
// accumulators, so up to four rows of A use 16 of the 32 registers.
#include <immintrin.h>

#include <algorithm>

#include "ops/matmul/gemv_panels.h"

namespace attune::gemv_panels_detail {
namespace {

template <int M>
void Panel(const Problem& p, int64_t panel) {
  const PanelLayout& w = *p.layout;
  const float* base = p.weights + panel * w.panel_stride;
  __m512 acc[M][4];
  for (int r = 0; r < M; ++r)
    for (int j = 0; j < 4; ++j) acc[r][j] = _mm512_setzero_ps();
  // Blocks are walked by pointer: a division per row would cost more than
  // the row's FMAs when blocks are single rows (the row-major case).
  const float* block = base;
  for (int64_t k0 = 0; k0 < w.k; k0 += w.block_rows, block += w.block_stride) {
    const float* row = block;
    const int64_t rows = std::min(w.block_rows, w.k - k0);
    for (int64_t kk = 0; kk < rows; ++kk, row += kSimdPanelCols) {
      const __m512 w0 = _mm512_loadu_ps(row), w1 = _mm512_loadu_ps(row + 16);
      const __m512 w2 = _mm512_loadu_ps(row + 32), w3 = _mm512_loadu_ps(row + 48);
      for (int r = 0; r < M; ++r) {
        const __m512 x = _mm512_set1_ps(p.a[r * w.k + k0 + kk]);
        acc[r][0] = _mm512_fmadd_ps(x, w0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(x, w1, acc[r][1]);
        acc[r][2] = _mm512_fmadd_ps(x, w2, acc[r][2]);
        acc[r][3] = _mm512_fmadd_ps(x, w3, acc[r][3]);
      }
    }
  }
  const int64_t n0 = panel * kSimdPanelCols;
  const int64_t cols = std::min<int64_t>(kSimdPanelCols, w.n - n0);
  for (int j = 0; j < 4; ++j) {
    const int64_t valid = std::clamp<int64_t>(cols - 16 * j, 0, 16);
    if (valid == 0) break;
    const __mmask16 mask = static_cast<__mmask16>((1u << valid) - 1u);
    const __m512 bias = p.bias != nullptr ? _mm512_maskz_loadu_ps(mask, p.bias + n0 + 16 * j) : _mm512_setzero_ps();
    for (int r = 0; r < M; ++r)
      _mm512_mask_storeu_ps(p.c + r * w.n + n0 + 16 * j, mask, _mm512_add_ps(acc[r][j], bias));
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

void PanelRangeAvx512(const Problem& p, int64_t first, int64_t last) {
  switch (p.m) {
    case 1: return Panels<1>(p, first, last);
    case 2: return Panels<2>(p, first, last);
    case 3: return Panels<3>(p, first, last);
    case 4: return Panels<4>(p, first, last);
    default: return PanelRangeGeneric(p, first, last);
  }
}

}  // namespace attune::gemv_panels_detail
