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

namespace attune::gemv_transposed_detail {
namespace {

float HorizontalSum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

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
  for (int r = 0; r < R; ++r) {
    float sum = HorizontalSum(_mm256_add_ps(even[r], odd[r]));
    for (int64_t j = i; j < k; ++j) sum += a[j] * rows[r][j];
    out[r] = sum;
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
  RowRange<4>(a, b, c, m, k, n, begin, end);
}

void RowRangeAvx2Adjacent(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t begin,
                          int64_t end) {
  RowRange<1>(a, b, c, m, k, n, begin, end);
}

}  // namespace attune::gemv_transposed_detail
