// The transposed GEMV with ymm FMAs: four rows of B stream side by side (four
// sequential streams for the prefetchers), each into two accumulators per row
// of A, so that the FMA latency never waits on one chain.
#include <immintrin.h>

#include "ops/matmul/gemv_transposed.h"

namespace attune::gemv_transposed_detail {
namespace {

constexpr int kRowsOfB = 4;

float HorizontalSum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// Dot products of one row of A with `R` consecutive rows of B.
template <int R>
void Dots(const float* a, const float* b, int64_t k, float* out) {
  __m256 even[R], odd[R];
  for (int r = 0; r < R; ++r) even[r] = odd[r] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    const __m256 x0 = _mm256_loadu_ps(a + i), x1 = _mm256_loadu_ps(a + i + 8);
    for (int r = 0; r < R; ++r) {
      even[r] = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b + r * k + i), even[r]);
      odd[r] = _mm256_fmadd_ps(x1, _mm256_loadu_ps(b + r * k + i + 8), odd[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    float sum = HorizontalSum(_mm256_add_ps(even[r], odd[r]));
    for (int64_t j = i; j < k; ++j) sum += a[j] * b[r * k + j];
    out[r] = sum;
  }
}

}  // namespace

void RowRangeAvx2(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t begin,
                  int64_t end) {
  float dots[kRowsOfB];
  int64_t col = begin;
  for (; col + kRowsOfB <= end; col += kRowsOfB)
    for (int64_t r = 0; r < m; ++r) {
      Dots<kRowsOfB>(a + r * k, b + col * k, k, dots);
      for (int j = 0; j < kRowsOfB; ++j) c[r * n + col + j] = dots[j];
    }
  for (; col < end; ++col)
    for (int64_t r = 0; r < m; ++r) {
      Dots<1>(a + r * k, b + col * k, k, dots);
      c[r * n + col] = dots[0];
    }
}

}  // namespace attune::gemv_transposed_detail
