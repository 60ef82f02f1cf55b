// A few rows times a constant matrix stored in column panels, the blocked
// layout oneDNN packs weights into (for AVX-512: panels of 64 columns, each a
// contiguous run of K blocks of 16 rows × 64 columns). Decode multiplies one
// row by every weight matrix, so the product is bound by how fast the weights
// stream from memory: each panel is read once, front to back, into registers
// holding its 64 outputs per row, and threads take disjoint runs of panels.
#pragma once

#include <cstdint>

namespace attune {

/// Where element (k, n) of a K × N matrix sits: at
///   (n / panel_cols) · panel_stride + (k / block_rows) · block_stride
///   + (k % block_rows) · panel_cols + n % panel_cols.
/// Rows past K in the last block are never read. A plain row-major matrix is
/// the case panel_stride = panel_cols, block_rows = 1, block_stride = N.
struct PanelLayout {
  int64_t k = 0, n = 0;
  int64_t panel_cols = 0;
  int64_t panel_stride = 0;
  int64_t block_rows = 0;
  int64_t block_stride = 0;
  /// Whether columns past N in the last panel are readable (packed layouts pad
  /// with zeros); when not, that panel's missing columns are never read.
  bool padded = false;

  int64_t panels() const { return panel_cols > 0 ? (n + panel_cols - 1) / panel_cols : 0; }
};

/// Rows of A up to which the panel GEMV beats the blocked GEMM: every extra
/// row reuses the panel in registers, until the accumulators run out.
inline constexpr int64_t kGemvPanelsMaxRows = 4;

/// A dense row-major K × N matrix seen as panels of 64 columns.
PanelLayout RowMajorPanels(int64_t k, int64_t n);

/// c[M, N] = a[M, K] · W (+ bias[N]) for W laid out as `layout`, M ≤
/// kGemvPanelsMaxRows; c and a dense row-major. Split over panels across
/// `threads` in static contiguous ranges; the sum over K runs in order, so the
/// result does not depend on the thread count.
void GemvPanels(const PanelLayout& layout, const float* weights, const float* a, int64_t m, const float* bias,
                float* c, int threads);

namespace gemv_panels_detail {

struct Problem {
  const PanelLayout* layout;
  const float* weights;
  const float* a;
  int64_t m;
  const float* bias;  // may be null
  float* c;
};

/// Computes the outputs of panels [first, last). The SIMD variants take
/// panels of 64 columns; every variant takes any M ≤ kGemvPanelsMaxRows.
using PanelRangeFn = void (*)(const Problem& p, int64_t first, int64_t last);

void PanelRangeGeneric(const Problem& p, int64_t first, int64_t last);
void PanelRangeAvx2(const Problem& p, int64_t first, int64_t last);
void PanelRangeAvx512(const Problem& p, int64_t first, int64_t last);

/// Columns per panel the SIMD variants are written for.
inline constexpr int64_t kSimdPanelCols = 64;

/// Whether the SIMD variants may read `panel` to its full width.
inline bool FullWidth(const PanelLayout& layout, int64_t panel) {
  return layout.padded || (panel + 1) * layout.panel_cols <= layout.n;
}

}  // namespace gemv_panels_detail
}  // namespace attune
