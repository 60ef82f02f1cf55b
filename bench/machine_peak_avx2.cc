// Built with the AVX2 + FMA flags (bench/CMakeLists.txt); runs only where CPUID and XGETBV report them.
#include <immintrin.h>

#include "bench/machine_peak_kernels.h"

namespace attune::bench {
namespace {

float HorizontalSum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

}  // namespace

float FmaChainsYmm(int64_t iterations) {
  const __m256 b = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
  __m256 a0 = _mm256_set1_ps(0.10f), a1 = _mm256_set1_ps(0.11f), a2 = _mm256_set1_ps(0.12f);
  __m256 a3 = _mm256_set1_ps(0.13f), a4 = _mm256_set1_ps(0.14f), a5 = _mm256_set1_ps(0.15f);
  __m256 a6 = _mm256_set1_ps(0.16f), a7 = _mm256_set1_ps(0.17f), a8 = _mm256_set1_ps(0.18f);
  __m256 a9 = _mm256_set1_ps(0.19f), a10 = _mm256_set1_ps(0.20f), a11 = _mm256_set1_ps(0.21f);
  for (int64_t i = 0; i < iterations; ++i) {
    a0 = _mm256_fmadd_ps(a0, b, c);
    a1 = _mm256_fmadd_ps(a1, b, c);
    a2 = _mm256_fmadd_ps(a2, b, c);
    a3 = _mm256_fmadd_ps(a3, b, c);
    a4 = _mm256_fmadd_ps(a4, b, c);
    a5 = _mm256_fmadd_ps(a5, b, c);
    a6 = _mm256_fmadd_ps(a6, b, c);
    a7 = _mm256_fmadd_ps(a7, b, c);
    a8 = _mm256_fmadd_ps(a8, b, c);
    a9 = _mm256_fmadd_ps(a9, b, c);
    a10 = _mm256_fmadd_ps(a10, b, c);
    a11 = _mm256_fmadd_ps(a11, b, c);
  }
  const __m256 s = _mm256_add_ps(
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                    _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7))),
      _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  return HorizontalSum(s);
}

float ReadSumYmm(const float* data, size_t n) {
  // Four parts walked side by side, as the decode GEMVs read their weights
  // (ops/matmul/gemv_transposed_avx2.cc): distant sequential streams read
  // faster than one on Zen 3. The parts start 4 KiB + 64 B past the quarters:
  // exactly a quarter of 1 GiB apart, the streams share their low address
  // bits and read at half the speed of one. The gaps are summed last.
  constexpr size_t kSkew = 1040;
  const size_t part = n > 3 * kSkew ? (n - 3 * kSkew) / 4 / 8 * 8 : 0;
  const size_t stride = part + kSkew;
  const float* p0 = data;
  const float* p1 = data + stride;
  const float* p2 = data + 2 * stride;
  const float* p3 = data + 3 * stride;
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  for (size_t i = 0; i < part; i += 8) {
    s0 = _mm256_add_ps(s0, _mm256_loadu_ps(p0 + i));
    s1 = _mm256_add_ps(s1, _mm256_loadu_ps(p1 + i));
    s2 = _mm256_add_ps(s2, _mm256_loadu_ps(p2 + i));
    s3 = _mm256_add_ps(s3, _mm256_loadu_ps(p3 + i));
  }
  float sum = HorizontalSum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  if (part == 0) {
    for (size_t i = 0; i < n; ++i) sum += data[i];
    return sum;
  }
  for (size_t gap = 1; gap <= 3; ++gap)
    for (size_t i = gap * stride - kSkew; i < gap * stride; ++i) sum += data[i];
  for (size_t i = 3 * stride + part; i < n; ++i) sum += data[i];
  return sum;
}

}  // namespace attune::bench
