// AVX2 + FMA traits for vector_math_impl.h: 8 floats per vector, masks as all-ones lanes.
#include <immintrin.h>

#include "ops/elementwise/vector_math.h"
#include "ops/elementwise/vector_math_impl.h"

namespace attune::elementwise::vector_math_avx2 {
namespace {

struct Avx2 {
  static constexpr int kLanes = 8;
  using F = __m256;
  using M = __m256;
  static __m256 Bits(int32_t v) { return _mm256_castsi256_ps(_mm256_set1_epi32(v)); }
  static F Zero() { return _mm256_setzero_ps(); }
  static F Set1(float v) { return _mm256_set1_ps(v); }
  static F Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F Add(F a, F b) { return _mm256_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm256_div_ps(a, b); }
  static F Fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F Min(F a, F b) { return _mm256_min_ps(a, b); }
  static F Max(F a, F b) { return _mm256_max_ps(a, b); }
  static F Abs(F a) { return _mm256_and_ps(a, Bits(0x7fffffff)); }
  static F CopySign(F a, F s) {
    const __m256 sign = Bits(static_cast<int32_t>(0x80000000u));
    return _mm256_or_ps(_mm256_andnot_ps(sign, a), _mm256_and_ps(sign, s));
  }
  static F Round(F x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static F Pow2(F n) {
    const __m256i biased = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23));
  }
  static F Exponent(F x) {
    const __m256i field = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(field, _mm256_set1_epi32(127)));
  }
  static F Mantissa(F x) { return _mm256_or_ps(_mm256_and_ps(x, Bits(0x007fffff)), Bits(0x3f800000)); }
  static M Lt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M Eq(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static M IsNan(F a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static F Select(M m, F a, F b) { return _mm256_blendv_ps(b, a, m); }
};

}  // namespace

const VectorMathKernels& Kernels() {
  static const VectorMathKernels kernels = vector_math_detail::MakeKernels<Avx2>("avx2");
  return kernels;
}

}  // namespace attune::elementwise::vector_math_avx2
