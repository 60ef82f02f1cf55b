// The end of one dot product of the transposed GEMV, for every ISA file that
// computes one: two ymm accumulators (even and odd 8-float halves of each
// 16-float step over K), their sum reduced in a fixed order, then the K tail
// past the last step. Every tile shape and register width ends its dot
// products here, so an output has the same bits whichever tile computed it.
// Internal linkage: each ISA file compiles its own copy with its own flags.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

namespace attune::gemv_transposed_detail {
namespace {

inline float HorizontalSum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

inline float FinishDot(__m256 even, __m256 odd, const float* a, const float* b, int64_t i, int64_t k) {
  float sum = HorizontalSum(_mm256_add_ps(even, odd));
  // An explicit fused multiply-add: left to the compiler, the contraction of
  // a · b + sum may differ between files compiled with different flags.
  for (int64_t j = i; j < k; ++j) sum = std::fma(a[j], b[j], sum);
  return sum;
}

}  // namespace
}  // namespace attune::gemv_transposed_detail
