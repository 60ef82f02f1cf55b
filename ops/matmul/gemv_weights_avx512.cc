// The weight GEMVs with zmm registers. Panels: a row's 64 outputs of one panel
// are four accumulators, so up to four rows of A use 16 of the 32 registers.
// Row-major: four weight rows at a time update sums held in L1, so each pass
// reads four streams of contiguous memory and touches the sums once per four rows.
#include <immintrin.h>

#include <algorithm>

#include "ops/matmul/gemv_weights.h"

namespace attune::gemv_weights_detail {
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

template <int M>
void ColumnChunk(const Problem& p, int64_t j0, int64_t width) {
  const int64_t k = p.layout->k, n = p.layout->n;
  alignas(64) float acc[M][kColumnChunk];
  const int64_t vectors = width / 16;
  const int64_t tail = width - vectors * 16;
  const __mmask16 tail_mask = static_cast<__mmask16>((1u << tail) - 1u);
  // Whole vectors are zeroed: the tail vector's unused lanes are summed too
  // (of zeros loaded under the mask) and never written out.
  const int64_t count = vectors + (tail > 0);
  for (int r = 0; r < M; ++r) std::fill(acc[r], acc[r] + count * 16, 0.0f);
  int64_t kk = 0;
  for (; kk + 4 <= k; kk += 4) {
    const float* w0 = p.weights + kk * n + j0;
    const float* w1 = w0 + n;
    const float* w2 = w1 + n;
    const float* w3 = w2 + n;
    __m512 x[M][4];
    for (int r = 0; r < M; ++r)
      for (int u = 0; u < 4; ++u) x[r][u] = _mm512_set1_ps(p.a[r * k + kk + u]);
    for (int64_t v = 0; v < count; ++v) {
      const __mmask16 mask = v == vectors ? tail_mask : static_cast<__mmask16>(0xffff);
      const int64_t j = v * 16;
      const __m512 b0 = _mm512_maskz_loadu_ps(mask, w0 + j), b1 = _mm512_maskz_loadu_ps(mask, w1 + j);
      const __m512 b2 = _mm512_maskz_loadu_ps(mask, w2 + j), b3 = _mm512_maskz_loadu_ps(mask, w3 + j);
      for (int r = 0; r < M; ++r) {
        __m512 s = _mm512_load_ps(acc[r] + j);
        s = _mm512_fmadd_ps(x[r][0], b0, s);
        s = _mm512_fmadd_ps(x[r][1], b1, s);
        s = _mm512_fmadd_ps(x[r][2], b2, s);
        s = _mm512_fmadd_ps(x[r][3], b3, s);
        _mm512_store_ps(acc[r] + j, s);
      }
    }
  }
  for (; kk < k; ++kk) {
    const float* w0 = p.weights + kk * n + j0;
    for (int r = 0; r < M; ++r) {
      const __m512 x = _mm512_set1_ps(p.a[r * k + kk]);
      for (int64_t v = 0; v < count; ++v) {
        const __mmask16 mask = v == vectors ? tail_mask : static_cast<__mmask16>(0xffff);
        const int64_t j = v * 16;
        _mm512_store_ps(acc[r] + j,
                        _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(mask, w0 + j), _mm512_load_ps(acc[r] + j)));
      }
    }
  }
  for (int r = 0; r < M; ++r)
    for (int64_t j = 0; j < width; ++j)
      p.c[r * n + j0 + j] = acc[r][j] + (p.bias != nullptr ? p.bias[j0 + j] : 0.0f);
}

template <int M>
void Columns(const Problem& p, int64_t first, int64_t last) {
  for (int64_t j0 = first; j0 < last; j0 += kColumnChunk) ColumnChunk<M>(p, j0, std::min(kColumnChunk, last - j0));
}

}  // namespace

void ColumnRangeAvx512(const Problem& p, int64_t first, int64_t last) {
  switch (p.m) {
    case 1: return Columns<1>(p, first, last);
    case 2: return Columns<2>(p, first, last);
    case 3: return Columns<3>(p, first, last);
    case 4: return Columns<4>(p, first, last);
    default: return ColumnRangeGeneric(p, first, last);
  }
}

void PanelRangeAvx512(const Problem& p, int64_t first, int64_t last) {
  switch (p.m) {
    case 1: return Panels<1>(p, first, last);
    case 2: return Panels<2>(p, first, last);
    case 3: return Panels<3>(p, first, last);
    case 4: return Panels<4>(p, first, last);
    default: return PanelRangeGeneric(p, first, last);
  }
}

}  // namespace attune::gemv_weights_detail
