// The transposed GEMV with ymm FMAs. A range of B's rows is cut into
// `Streams` equal parts walked side by side: each step takes one row of every
// part, so the reads are `Streams` sequential streams in distant parts of B.
// The best count depends on the core's prefetchers (bench/gemv_bench, GPT-2's
// tied head, three copies of it so that none is in L3):
// - Zen 3: four streams read 12.7-13.4 GB/s on one core and 19-20 on two,
//   against 9.0-9.4 and 15.2 for adjacent rows, whose streams are one region
//   of memory;
// - Zen 4: adjacent rows read 21.6-22.4 GB/s on one core and 30-42 on two,
//   against 16.6-21.3 and 27-31 with four streams.
// AVX2 machines take four streams and AVX-512 machines adjacent rows
// (gemv_transposed.cc). Two accumulators per row keep the FMA latency off the
// critical path.
#include <immintrin.h>

#include "ops/matmul/gemv_transposed.h"
#include "ops/matmul/gemv_transposed_dot.h"

namespace attune::gemv_transposed_detail {
namespace {

// Dot products of one row of A with the rows rows[0..R) of B.
template <int R>
void Dots(const float* a, const float* const* rows, int64_t k, float* out) {
  __m256 even[R], odd[R];
  for (int r = 0; r < R; ++r) even[r] = odd[r] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    const __m256 x0 = _mm256_loadu_ps(a + i), x1 = _mm256_loadu_ps(a + i + 8);
    for (int r = 0; r < R; ++r) {
      even[r] = _mm256_fmadd_ps(x0, _mm256_loadu_ps(rows[r] + i), even[r]);
      odd[r] = _mm256_fmadd_ps(x1, _mm256_loadu_ps(rows[r] + i + 8), odd[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = FinishDot(even[r], odd[r], a, rows[r], i, k);
}

// Dot products of MA rows of A with NB adjacent rows of B (from b), into
// c[r * n + j]: 2 · MA · NB independent FMA chains, so that more rows of A
// run at the FMA rate rather than at its latency. Each output takes the
// FMAs Dots gives it, in the same order.
template <int MA, int NB>
void DotTile(const float* a, const float* b, float* c, int64_t k, int64_t n) {
  __m256 even[MA][NB], odd[MA][NB];
  for (int r = 0; r < MA; ++r)
    for (int j = 0; j < NB; ++j) even[r][j] = odd[r][j] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    __m256 b0[NB], b1[NB];
    for (int j = 0; j < NB; ++j) {
      b0[j] = _mm256_loadu_ps(b + j * k + i);
      b1[j] = _mm256_loadu_ps(b + j * k + i + 8);
    }
    for (int r = 0; r < MA; ++r) {
      const __m256 x0 = _mm256_loadu_ps(a + r * k + i), x1 = _mm256_loadu_ps(a + r * k + i + 8);
      for (int j = 0; j < NB; ++j) {
        even[r][j] = _mm256_fmadd_ps(x0, b0[j], even[r][j]);
        odd[r][j] = _mm256_fmadd_ps(x1, b1[j], odd[r][j]);
      }
    }
  }
  for (int r = 0; r < MA; ++r)
    for (int j = 0; j < NB; ++j) c[r * n + j] = FinishDot(even[r][j], odd[r][j], a + r * k, b + j * k, i, k);
}

// More rows of A than four: B's rows two at a time (6 KB at K = 768, in L1
// while every row of A passes over them), rows of A two at a time, so B
// streams from memory once.
void RowRangeManyRows(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t begin,
                      int64_t end) {
  int64_t col = begin;
  for (; col + 2 <= end; col += 2) {
    int64_t r = 0;
    for (; r + 2 <= m; r += 2) DotTile<2, 2>(a + r * k, b + col * k, c + r * n + col, k, n);
    if (r < m) DotTile<1, 2>(a + r * k, b + col * k, c + r * n + col, k, n);
  }
  if (col < end) {
    int64_t r = 0;
    for (; r + 2 <= m; r += 2) DotTile<2, 1>(a + r * k, b + col * k, c + r * n + col, k, n);
    if (r < m) DotTile<1, 1>(a + r * k, b + col * k, c + r * n + col, k, n);
  }
}

template <int kStreams>
void RowRange(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t begin,
              int64_t end) {
  // An odd number of rows apart, so that rows of a power-of-two length do not
  // put the streams at the same low address bits (gemv_weights_avx2.cc).
  int64_t part = (end - begin) / kStreams;
  if (part > 0 && part % 2 == 0) --part;
  float dots[kStreams];
  const float* rows[kStreams];
  for (int64_t j = 0; j < part; ++j) {
    for (int s = 0; s < kStreams; ++s) rows[s] = b + (begin + s * part + j) * k;
    for (int64_t r = 0; r < m; ++r) {
      Dots<kStreams>(a + r * k, rows, k, dots);
      for (int s = 0; s < kStreams; ++s) c[r * n + begin + s * part + j] = dots[s];
    }
  }
  for (int64_t col = begin + kStreams * part; col < end; ++col) {
    rows[0] = b + col * k;
    for (int64_t r = 0; r < m; ++r) {
      Dots<1>(a + r * k, rows, k, dots);
      c[r * n + col] = dots[0];
    }
  }
}

}  // namespace

void RowRangeAvx2(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t begin,
                  int64_t end) {
  if (m > kGemvStreamBoundRows) return RowRangeManyRows(a, b, c, m, k, n, begin, end);
  RowRange<4>(a, b, c, m, k, n, begin, end);
}

void RowRangeAvx2Adjacent(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t begin,
                          int64_t end) {
  if (m > kGemvStreamBoundRows) return RowRangeManyRows(a, b, c, m, k, n, begin, end);
  RowRange<1>(a, b, c, m, k, n, begin, end);
}

}  // namespace attune::gemv_transposed_detail
