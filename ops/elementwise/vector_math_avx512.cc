// AVX-512 traits for vector_math_impl.h: 16 floats per vector, masks in k registers.
// GCC 12 warns about _mm512_undefined_ps() inside its own intrinsics headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include "ops/elementwise/vector_math.h"
#include "ops/elementwise/vector_math_impl.h"

namespace attune::elementwise::vector_math_avx512 {
namespace {

struct Avx512 {
  static constexpr int kLanes = 16;
  using F = __m512;
  using M = __mmask16;
  static F Zero() { return _mm512_setzero_ps(); }
  static F Set1(float v) { return _mm512_set1_ps(v); }
  static F Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F Add(F a, F b) { return _mm512_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm512_div_ps(a, b); }
  static F Fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F Min(F a, F b) { return _mm512_min_ps(a, b); }
  static F Max(F a, F b) { return _mm512_max_ps(a, b); }
  static F Abs(F a) { return _mm512_abs_ps(a); }
  static F CopySign(F a, F s) {
    const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(0x80000000u)));
    return _mm512_or_ps(_mm512_andnot_ps(sign, a), _mm512_and_ps(sign, s));
  }
  static F Round(F x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static F Pow2(F n) {
    const __m512i biased = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(biased, 23));
  }
  static F Exponent(F x) {
    const __m512i field = _mm512_srli_epi32(_mm512_castps_si512(x), 23);
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(field, _mm512_set1_epi32(127)));
  }
  static F Mantissa(F x) {
    const __m512i bits = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x007fffff));
    return _mm512_castsi512_ps(_mm512_or_si512(bits, _mm512_set1_epi32(0x3f800000)));
  }
  static M Lt(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M Eq(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static M IsNan(F a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static F Select(M m, F a, F b) { return _mm512_mask_blend_ps(m, b, a); }
};

}  // namespace

const VectorMathKernels& Kernels() {
  static const VectorMathKernels kernels = vector_math_detail::MakeKernels<Avx512>("avx512");
  return kernels;
}

}  // namespace attune::elementwise::vector_math_avx512
