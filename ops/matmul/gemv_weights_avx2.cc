// The weight GEMVs with ymm registers. Panels: a row's 64 outputs of one panel
// are eight accumulators; weights are read as FMA memory operands, so one row
// needs nine of the sixteen registers, and more rows spill accumulators to L1,
// which costs nothing next to streaming the panel from memory. Row-major: the
// weight rows stream in address order through sums held in L1.
#include <immintrin.h>

#include <algorithm>

#include "ops/matmul/gemv_weights.h"

namespace attune::gemv_weights_detail {
namespace {

constexpr int kVectors = kSimdPanelCols / 8;

// Calls simd.template operator()<M>() for the row count m when 1 ≤ m ≤ Max
// (accumulators sized at compile time), else other().
template <int Max, typename Simd, typename Other>
void ForRowsOfA(int64_t m, const Simd& simd, const Other& other) {
  if constexpr (Max > 0) {
    if (m == Max) return simd.template operator()<Max>();
    return ForRowsOfA<Max - 1>(m, simd, other);
  } else {
    other();
  }
}

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

// More rows than Panel holds (reached where no zmm tiles run, e.g. with the
// ISA forced): groups of up to four rows, each reading the panel again (from
// L2 after the first), every output the same chain of FMAs as one row alone.
void PanelsManyRows(const Problem& p, int64_t first, int64_t last) {
  for (int64_t row0 = 0; row0 < p.m; row0 += kGemvStreamBoundRows) {
    Problem part = p;
    part.a = p.a + row0 * p.layout->k;
    part.c = p.c + row0 * p.layout->n;
    part.m = std::min<int64_t>(kGemvStreamBoundRows, p.m - row0);
    ForRowsOfA<kGemvStreamBoundRows>(part.m, [&]<int M>() { Panels<M>(part, first, last); }, [] {});
  }
}

// The outputs are the sums: the columns of C (N floats per row of A: 128 KB
// for a 32 000-word vocabulary) stay in L1/L2 while every weight row streams
// past once. Rows go in groups of kRowGroup: a vector of C is loaded once,
// takes the group's FMAs in a fixed order and is stored once, so C's traffic is
// a kRowGroup-th of the weights'. The rows of a group are K / kRowGroup apart,
// so that the group reads kRowGroup sequential streams in distant parts of the
// matrix: on Zen 3, bench/gemv_bench reached 12.6-14.9 GB/s on one core that
// way, against 10.1-12.5 GB/s with adjacent rows (whose streams are one
// region of memory) and 8.5 GB/s one row at a time. The order of addition is
// the same for every thread count (threads split the columns).
constexpr int64_t kRowGroup = 8;

// The largest odd number ≤ x (0 for 0). A stream distance of an odd number of
// rows keeps streams apart in the low address bits when rows are a power of
// two long: with TinyLlama's 8 KB rows, K / 8 rows apart (2 MB) read 13.0 GB/s
// on a Zen 3 core where adjacent rows read 14.2.
inline int64_t OddBelow(int64_t x) { return x > 0 && x % 2 == 0 ? x - 1 : x; }

// Adds rows kk, kk + stride, ..., kk + (G − 1)·stride of the weights.
template <int M, int G>
inline void RowGroup(const Problem& p, int64_t kk, int64_t stride, int64_t first, int64_t end, int64_t last) {
  const int64_t n = p.layout->n;
  const float* w = p.weights + kk * n;
  for (int r = 0; r < M; ++r) {
    __m256 x[G];
    for (int g = 0; g < G; ++g) x[g] = _mm256_broadcast_ss(p.a + r * p.lda + kk + g * stride);
    float* out = p.c + r * n;
    for (int64_t j = first; j < end; j += 8) {
      __m256 sum = _mm256_loadu_ps(out + j);
      for (int g = 0; g < G; ++g) sum = _mm256_fmadd_ps(x[g], _mm256_loadu_ps(w + g * stride * n + j), sum);
      _mm256_storeu_ps(out + j, sum);
    }
    // The last few columns one by one: masked loads and stores are slow on
    // some cores (AMD's vmaskmovps).
    for (int64_t j = end; j < last; ++j)
      for (int g = 0; g < G; ++g) out[j] += p.a[r * p.lda + kk + g * stride] * w[g * stride * n + j];
  }
}

template <int M>
void Columns(const Problem& p, int64_t first, int64_t last) {
  const int64_t k = p.layout->k, n = p.layout->n;
  const int64_t end = first + (last - first) / 8 * 8;
  for (int r = 0; r < M; ++r)
    for (int64_t j = first; j < last; ++j) p.c[r * n + j] = p.bias != nullptr ? p.bias[j] : 0.0f;
  const int64_t stride = OddBelow(k / kRowGroup);
  for (int64_t kk = 0; kk < stride; ++kk) RowGroup<M, kRowGroup>(p, kk, stride, first, end, last);
  for (int64_t kk = stride * kRowGroup; kk < k; ++kk) RowGroup<M, 1>(p, kk, 1, first, end, last);
}

}  // namespace

void ColumnRangeAvx2(const Problem& p, int64_t first, int64_t last) {
  ForRowsOfA<kGemvMaxRowsOfA>(p.m, [&]<int M>() { Columns<M>(p, first, last); },
                              [&] { ColumnRangeGeneric(p, first, last); });
}

void PanelRangeAvx2(const Problem& p, int64_t first, int64_t last) {
  if (p.m > kGemvStreamBoundRows) return PanelsManyRows(p, first, last);
  ForRowsOfA<kGemvStreamBoundRows>(p.m, [&]<int M>() { Panels<M>(p, first, last); },
                                       [&] { PanelRangeGeneric(p, first, last); });
}

}  // namespace attune::gemv_weights_detail
