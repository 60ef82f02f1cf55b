// AVX2 + FMA flash attention: 8 query lanes per vector, a 6 x 16 register
// tile (12 accumulators of 16 registers) for every block_q (a multiple of 16).
#include <immintrin.h>

#include "ops/attention/kernels/flash_attention.h"
#include "ops/attention/kernels/flash_decode.h"
#include "ops/attention/kernels/flash_exp.h"
#include "ops/attention/kernels/flash_tile.h"

namespace attune::attention::flash_avx2 {
namespace {

using namespace flash_detail;

struct Avx2 {
  static constexpr int kLanes = 8;
  using F = __m256;
  static F Zero() { return _mm256_setzero_ps(); }
  static F Set1(float x) { return _mm256_set1_ps(x); }
  static F Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F Add(F a, F b) { return _mm256_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm256_div_ps(a, b); }
  static F Fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F Max(F a, F b) { return _mm256_max_ps(a, b); }
  static F MaskRange(F s, const int32_t* lo, const int32_t* hi, int32_t j) {
    const __m256i jv = _mm256_set1_epi32(j);
    const __m256i lov = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo));
    const __m256i hiv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hi));
    // hidden = lo > j or j >= hi  (i.e. not hi > j)
    const __m256i hidden = _mm256_or_si256(_mm256_cmpgt_epi32(lov, jv),
                                           _mm256_xor_si256(_mm256_cmpgt_epi32(hiv, jv), _mm256_set1_epi32(-1)));
    return _mm256_blendv_ps(s, _mm256_set1_ps(kNegInf), _mm256_castsi256_ps(hidden));
  }
  static bool AnyDifferent(F a, F b) { return _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_NEQ_UQ)) != 0; }
  static F ZeroIfNegInf(F m) {
    return _mm256_blendv_ps(m, _mm256_setzero_ps(), _mm256_cmp_ps(m, _mm256_set1_ps(kNegInf), _CMP_EQ_OQ));
  }
  static F KeepNegInf(F x, F r) {
    return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, _mm256_set1_ps(kNegInf), _CMP_EQ_OQ));
  }
  static F Exp2(F x) {
    x = _mm256_max_ps(x, _mm256_set1_ps(kExp2Lowest));
    const F t = _mm256_add_ps(x, _mm256_set1_ps(kExp2Magic));
    const F f = _mm256_sub_ps(x, _mm256_sub_ps(t, _mm256_set1_ps(kExp2Magic)));
    F p = _mm256_set1_ps(kExp2C5);
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2C4));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2C3));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2C2));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2C1));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2C0));
    const __m256i scale = _mm256_slli_epi32(_mm256_castps_si256(t), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(scale));
  }
  static F Exp2Clamped(F x) { return Exp2(_mm256_min_ps(x, _mm256_set1_ps(kExp2Highest))); }

  // Along head_dim (decode).
  static float Reduce(F v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float Dot(const float* a, const float* b, int64_t n) {
    F acc0 = Zero(), acc1 = Zero();
    int64_t d = 0;
    for (; d + 16 <= n; d += 16) {
      acc0 = Fma(Load(a + d), Load(b + d), acc0);
      acc1 = Fma(Load(a + d + 8), Load(b + d + 8), acc1);
    }
    for (; d + 8 <= n; d += 8) acc0 = Fma(Load(a + d), Load(b + d), acc0);
    float tail = 0.0f;
    for (; d < n; ++d) tail += a[d] * b[d];
    return Reduce(Add(acc0, acc1)) + tail;
  }
  static void Axpy(float* y, float alpha, const float* x, int64_t n) {
    const F av = Set1(alpha);
    int64_t d = 0;
    for (; d + 8 <= n; d += 8) Store(y + d, Fma(av, Load(x + d), Load(y + d)));
    for (; d < n; ++d) y[d] += alpha * x[d];
  }
  static void Scale(float* y, float alpha, int64_t n) {
    for (int64_t d = 0; d < n; ++d) y[d] *= alpha;
  }
};

void QueryBlock(const AttentionArgs& a, const FlashPlan& plan, const FlashTask& task, float* scratch) {
  ProcessQueryBlock<Avx2, 6, 2>(a, plan, task, scratch);
}

void Decode(const AttentionArgs& a, float log2_scale, const DecodeTask& task, int64_t group) {
  DecodeChunk<Avx2>(a, log2_scale, task, group);
}

void Exp2Array(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += Avx2::kLanes) Avx2::Store(y + i, Avx2::Exp2(Avx2::Load(x + i)));
}

}  // namespace

const FlashKernels& Kernels() {
  static const FlashKernels kernels{"avx2", &QueryBlock, &Decode, &Exp2Array};
  return kernels;
}

}  // namespace attune::attention::flash_avx2
