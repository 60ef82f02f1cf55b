// AVX-512 flash attention: 16 query lanes per vector, a 6 x 64 register tile
// (24 accumulators of 32) for block_q = 64, 12 x 32 for 32, 12 x 16 for 16.
// GCC 12 warns about _mm512_undefined_ps() inside its own intrinsics headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstring>

#include "ops/attention/kernels/flash_attention.h"
#include "ops/attention/kernels/flash_decode.h"
#include "ops/attention/kernels/flash_exp.h"
#include "ops/attention/kernels/flash_tile.h"

namespace attune::attention::flash_avx512 {
namespace {

using namespace flash_detail;

struct Avx512 {
  static constexpr int kLanes = 16;
  using F = __m512;
  static F Zero() { return _mm512_setzero_ps(); }
  static F Set1(float x) { return _mm512_set1_ps(x); }
  static F Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F Add(F a, F b) { return _mm512_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm512_div_ps(a, b); }
  static F Fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F Max(F a, F b) { return _mm512_max_ps(a, b); }
  static F MaskRange(F s, const int32_t* lo, const int32_t* hi, int32_t j) {
    const __m512i jv = _mm512_set1_epi32(j);
    const __mmask16 visible = _mm512_cmple_epi32_mask(_mm512_loadu_si512(lo), jv) &
                              _mm512_cmplt_epi32_mask(jv, _mm512_loadu_si512(hi));
    return _mm512_mask_mov_ps(_mm512_set1_ps(kNegInf), visible, s);
  }
  static bool AnyDifferent(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_NEQ_UQ) != 0; }
  static F ZeroIfNegInf(F m) {
    return _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(m, _mm512_set1_ps(kNegInf), _CMP_EQ_OQ), _mm512_setzero_ps());
  }
  static F KeepNegInf(F x, F r) {
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, _mm512_set1_ps(kNegInf), _CMP_EQ_OQ), x);
  }
  static F Exp2(F x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(kExp2Lowest));
    const F t = _mm512_add_ps(x, _mm512_set1_ps(kExp2Magic));
    const F f = _mm512_sub_ps(x, _mm512_sub_ps(t, _mm512_set1_ps(kExp2Magic)));
    F p = _mm512_set1_ps(kExp2C5);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2C4));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2C3));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2C2));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2C1));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2C0));
    const __m512i scale = _mm512_slli_epi32(_mm512_castps_si512(t), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(scale));
  }
  static void PrefetchL2(const float* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T1); }
  static F Exp2Clamped(F x) { return Exp2(_mm512_min_ps(x, _mm512_set1_ps(kExp2Highest))); }

  // Along head_dim (decode).
  static __mmask16 TailMask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static float Dot(const float* a, const float* b, int64_t n) {
    F acc = Zero();
    int64_t d = 0;
    for (; d + 16 <= n; d += 16) acc = Fma(Load(a + d), Load(b + d), acc);
    if (d < n) {
      const __mmask16 m = TailMask(n - d);
      acc = Fma(_mm512_maskz_loadu_ps(m, a + d), _mm512_maskz_loadu_ps(m, b + d), acc);
    }
    return _mm512_reduce_add_ps(acc);
  }
  /// Lane r = q · k[r * stride : r * stride + n], for 16 rows.
  static F DotRows(const float* q, const float* k, int64_t stride, int64_t n) {
    F acc[16];
    for (int r = 0; r < 16; ++r) acc[r] = Zero();
    int64_t d = 0;
    for (; d + 16 <= n; d += 16) {
      const F qv = Load(q + d);
#pragma GCC unroll 16
      for (int r = 0; r < 16; ++r) acc[r] = Fma(qv, Load(k + r * stride + d), acc[r]);
    }
    if (d < n) {
      const __mmask16 m = TailMask(n - d);
      const F qv = _mm512_maskz_loadu_ps(m, q + d);
#pragma GCC unroll 16
      for (int r = 0; r < 16; ++r) acc[r] = Fma(qv, _mm512_maskz_loadu_ps(m, k + r * stride + d), acc[r]);
    }
    // Transposing reduction: 16 vectors to one vector of their sums.
    F s[8], t[4], u[2];
    for (int i = 0; i < 8; ++i) {
      s[i] = Add(_mm512_unpacklo_ps(acc[2 * i], acc[2 * i + 1]), _mm512_unpackhi_ps(acc[2 * i], acc[2 * i + 1]));
    }
    for (int i = 0; i < 4; ++i) {
      t[i] = Add(_mm512_shuffle_ps(s[2 * i], s[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                 _mm512_shuffle_ps(s[2 * i], s[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    }
    for (int i = 0; i < 2; ++i) {
      u[i] = Add(_mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                 _mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    }
    return Add(_mm512_shuffle_f32x4(u[0], u[1], _MM_SHUFFLE(2, 0, 2, 0)),
               _mm512_shuffle_f32x4(u[0], u[1], _MM_SHUFFLE(3, 1, 3, 1)));
  }
  /// acc[0:n] += Σ_j p[j] · v[j * stride : j * stride + n], 64 columns at a
  /// time in registers, two accumulator sets to halve the FMA chains.
  static void AccumulateRows(float* acc, const float* p, const float* v, int64_t stride, int64_t keys, int64_t n) {
    for (int64_t d = 0; d < n; d += 64) {
      const int64_t width = n - d < 64 ? n - d : 64;
      __mmask16 m[4];
      for (int c = 0; c < 4; ++c) {
        const int64_t left = width - 16 * c;
        m[c] = left >= 16 ? static_cast<__mmask16>(0xffff) : left <= 0 ? static_cast<__mmask16>(0) : TailMask(left);
      }
      F a0[4], a1[4];
      for (int c = 0; c < 4; ++c) {
        a0[c] = _mm512_maskz_loadu_ps(m[c], acc + d + 16 * c);
        a1[c] = Zero();
      }
      int64_t j = 0;
      for (; j + 2 <= keys; j += 2) {
        const F p0 = Set1(p[j]), p1 = Set1(p[j + 1]);
        const float* v0 = v + j * stride + d;
        const float* v1 = v0 + stride;
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
          a0[c] = Fma(p0, _mm512_maskz_loadu_ps(m[c], v0 + 16 * c), a0[c]);
          a1[c] = Fma(p1, _mm512_maskz_loadu_ps(m[c], v1 + 16 * c), a1[c]);
        }
      }
      if (j < keys) {
        const F p0 = Set1(p[j]);
        for (int c = 0; c < 4; ++c) a0[c] = Fma(p0, _mm512_maskz_loadu_ps(m[c], v + j * stride + d + 16 * c), a0[c]);
      }
      for (int c = 0; c < 4; ++c) _mm512_mask_storeu_ps(acc + d + 16 * c, m[c], Add(a0[c], a1[c]));
    }
  }
};

void QueryBlock(const AttentionArgs& a, const FlashPlan& plan, const FlashTask& task, float* scratch) {
  switch (plan.block_q) {
    case 16: return ProcessQueryBlock<Avx512, 12, 1>(a, plan, task, scratch);
    case 32: return ProcessQueryBlock<Avx512, 12, 2>(a, plan, task, scratch);
    default: return ProcessQueryBlock<Avx512, 6, 4>(a, plan, task, scratch);  // multiples of 64
  }
}

void Decode(const AttentionArgs& a, float log2_scale, const DecodeTask& task, int64_t group) {
  DecodeChunk<Avx512>(a, log2_scale, task, group);
}

void Exp2Array(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += Avx512::kLanes) Avx512::Store(y + i, Avx512::Exp2(Avx512::Load(x + i)));
}

}  // namespace

const FlashKernels& Kernels() {
  static const FlashKernels kernels{"avx512", &QueryBlock, &Decode, &Exp2Array};
  return kernels;
}

}  // namespace attune::attention::flash_avx512
