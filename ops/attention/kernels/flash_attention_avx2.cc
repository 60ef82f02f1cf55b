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
  static void PrefetchL2(const float* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T1); }
  static F Exp2Clamped(F x) { return Exp2(_mm256_min_ps(x, _mm256_set1_ps(kExp2Highest))); }

  // Along head_dim (decode).
  static float Reduce(F v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float Dot(const float* a, const float* b, int64_t n) {
    F acc = Zero();
    int64_t d = 0;
    for (; d + 8 <= n; d += 8) acc = Fma(Load(a + d), Load(b + d), acc);
    float tail = 0.0f;
    for (; d < n; ++d) tail += a[d] * b[d];
    return Reduce(acc) + tail;
  }
  /// Lane r = q · k[r * stride : r * stride + n], for 8 rows.
  static F DotRows(const float* q, const float* k, int64_t stride, int64_t n) {
    F acc[8];
    for (int r = 0; r < 8; ++r) acc[r] = Zero();
    int64_t d = 0;
    for (; d + 8 <= n; d += 8) {
      const F qv = Load(q + d);
#pragma GCC unroll 8
      for (int r = 0; r < 8; ++r) acc[r] = Fma(qv, Load(k + r * stride + d), acc[r]);
    }
    F s[4], t[2];
    for (int i = 0; i < 4; ++i) {
      s[i] = Add(_mm256_unpacklo_ps(acc[2 * i], acc[2 * i + 1]), _mm256_unpackhi_ps(acc[2 * i], acc[2 * i + 1]));
    }
    for (int i = 0; i < 2; ++i) {
      t[i] = Add(_mm256_shuffle_ps(s[2 * i], s[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                 _mm256_shuffle_ps(s[2 * i], s[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    }
    F r = Add(_mm256_permute2f128_ps(t[0], t[1], 0x20), _mm256_permute2f128_ps(t[0], t[1], 0x31));
    if (d < n) {  // head_dim not a multiple of 8: finish the tail per row
      alignas(32) float lanes[8];
      Store(lanes, r);
      for (int row = 0; row < 8; ++row)
        for (int64_t e = d; e < n; ++e) lanes[row] += q[e] * k[row * stride + e];
      r = Load(lanes);
    }
    return r;
  }
  /// acc[0:n] += Σ_j p[j] · v[j * stride : j * stride + n], 32 columns at a
  /// time in registers, two accumulator sets.
  static void AccumulateRows(float* acc, const float* p, const float* v, int64_t stride, int64_t keys, int64_t n) {
    int64_t d = 0;
    for (; d + 32 <= n; d += 32) {
      F a0[4], a1[4];
      for (int c = 0; c < 4; ++c) {
        a0[c] = Load(acc + d + 8 * c);
        a1[c] = Zero();
      }
      int64_t j = 0;
      for (; j + 2 <= keys; j += 2) {
        const F p0 = Set1(p[j]), p1 = Set1(p[j + 1]);
        const float* v0 = v + j * stride + d;
        const float* v1 = v0 + stride;
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
          a0[c] = Fma(p0, Load(v0 + 8 * c), a0[c]);
          a1[c] = Fma(p1, Load(v1 + 8 * c), a1[c]);
        }
      }
      if (j < keys) {
        const F p0 = Set1(p[j]);
        for (int c = 0; c < 4; ++c) a0[c] = Fma(p0, Load(v + j * stride + d + 8 * c), a0[c]);
      }
      for (int c = 0; c < 4; ++c) Store(acc + d + 8 * c, Add(a0[c], a1[c]));
    }
    for (; d < n; ++d) {
      float x = acc[d];
      for (int64_t j = 0; j < keys; ++j) x += p[j] * v[j * stride + d];
      acc[d] = x;
    }
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
