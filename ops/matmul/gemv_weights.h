// A few rows times a constant weight matrix: decode multiplies one row by
// every weight of the model, so these products are bound by how fast the
// weights stream from memory, and each reads every weight once, front to back.
// Two layouts:
// - column panels, the blocked layout oneDNN packs weights into (for AVX-512:
//   panels of 64 columns, each a contiguous run of K blocks of 16 rows × 64
//   columns): a panel streams into registers holding its 64 outputs per row;
// - a dense row-major matrix used in place: K is cut into a fixed number of
//   slices of whole rows (fixed by K alone, so the sums do not depend on the
//   thread count); a thread streams its slices in address order, each into a
//   partial C, and the partials are added in slice order.
// Threads take disjoint ranges; the sum over K runs in order, so results do
// not depend on the thread count. The SIMD variants use ymm registers on
// AVX2 and AVX-512 machines alike (gemv_weights.cc says why).
#pragma once

#include <cstdint>

namespace attune {

/// Where element (k, n) of a K × N matrix in column panels sits: at
///   (n / panel_cols) · panel_stride + (k / block_rows) · block_stride
///   + (k % block_rows) · panel_cols + n % panel_cols.
/// Rows past K in the last block are never read.
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

/// Rows of A up to which these GEMVs run instead of oneDNN's GEMM: every
/// extra row reuses the weights while they are in registers, L1 or L2, so a
/// continuous-batching decode step of up to 16 sequences (and a prompt of up
/// to 16 tokens) reads the weights once, as one row does. Each row's result
/// is the same bits whatever the number of rows: a sequence decodes to the
/// same tokens alone or in a batch.
inline constexpr int64_t kGemvMaxRowsOfA = 16;
/// Rows of A up to which the weights' stream bounds these GEMVs and the
/// variants hold every row's outputs at once; more rows are bound by the FMAs
/// and take tiles of rows (zmm on AVX-512 machines).
inline constexpr int64_t kGemvStreamBoundRows = 4;


/// Rows up to which GemvPanels beats oneDNN's GEMM on `layout`: kGemvMaxRowsOfA
/// where its zmm tiles run (AVX-512 machines, panels of 64 columns), else
/// kGemvStreamBoundRows (it takes more, more slowly).
int64_t GemvPanelsFastRows(const PanelLayout& layout);

/// c[M, N] = a[M, K] · W (+ bias[N]) for W laid out as `layout`, M ≤
/// kGemvMaxRowsOfA; c and a dense row-major.
void GemvPanels(const PanelLayout& layout, const float* weights, const float* a, int64_t m, const float* bias,
                float* c, int threads);

/// The same for a dense row-major W of K × N.
void GemvRowMajor(const float* weights, int64_t k, int64_t n, const float* a, int64_t m, const float* bias, float* c,
                  int threads);

namespace gemv_weights_detail {

struct Problem {
  const PanelLayout* layout;
  const float* weights;
  const float* a;
  int64_t m;
  const float* bias;  // may be null
  float* c;
  int64_t lda = 0;    // floats between rows of A (row-major products: K of the whole matrix)
};

/// Computes the outputs of panels [first, last). The SIMD variants take
/// panels of 64 columns; every variant takes any M ≤ kGemvMaxRowsOfA.
using PanelRangeFn = void (*)(const Problem& p, int64_t first, int64_t last);

void PanelRangeGeneric(const Problem& p, int64_t first, int64_t last);
void PanelRangeAvx2(const Problem& p, int64_t first, int64_t last);
/// More rows than four on AVX-512 machines (zmm tiles; the same bits as the
/// ymm variant gives each row).
void PanelRangeAvx512ManyRows(const Problem& p, int64_t first, int64_t last);

/// Computes output columns [first, last) of a row-major product (`layout`
/// holds only k and n).
using ColumnRangeFn = void (*)(const Problem& p, int64_t first, int64_t last);

void ColumnRangeGeneric(const Problem& p, int64_t first, int64_t last);
void ColumnRangeAvx2(const Problem& p, int64_t first, int64_t last);


/// Columns per panel the SIMD variants are written for.
inline constexpr int64_t kSimdPanelCols = 64;

/// Whether the SIMD variants may read `panel` to its full width.
inline bool FullWidth(const PanelLayout& layout, int64_t panel) {
  return layout.padded || (panel + 1) * layout.panel_cols <= layout.n;
}

}  // namespace gemv_weights_detail
}  // namespace attune
