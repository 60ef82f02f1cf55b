// Portable flash attention: the same tiling over an 8-float "vector" of plain
// C++ loops (the compiler vectorises what it can for the baseline ISA).
#include <cstdint>
#include <cstring>

#include "ops/attention/kernels/flash_attention.h"
#include "ops/attention/kernels/flash_decode.h"
#include "ops/attention/kernels/flash_exp.h"
#include "ops/attention/kernels/flash_tile.h"

namespace attune::attention::flash_generic {
namespace {

using namespace flash_detail;

struct Portable {
  static constexpr int kLanes = 8;
  struct F {
    float v[kLanes];
  };
  template <class Op>
  static F Map(F a, F b, Op op) {
    F r;
    for (int i = 0; i < kLanes; ++i) r.v[i] = op(a.v[i], b.v[i]);
    return r;
  }
  static F Zero() { return Set1(0.0f); }
  static F Set1(float x) {
    F r;
    for (float& e : r.v) e = x;
    return r;
  }
  static F Load(const float* p) {
    F r;
    std::memcpy(r.v, p, sizeof(r.v));
    return r;
  }
  static void Store(float* p, F v) { std::memcpy(p, v.v, sizeof(v.v)); }
  static F Add(F a, F b) { return Map(a, b, [](float x, float y) { return x + y; }); }
  static F Sub(F a, F b) { return Map(a, b, [](float x, float y) { return x - y; }); }
  static F Mul(F a, F b) { return Map(a, b, [](float x, float y) { return x * y; }); }
  static F Div(F a, F b) { return Map(a, b, [](float x, float y) { return x / y; }); }
  static F Fma(F a, F b, F c) {
    F r;
    for (int i = 0; i < kLanes; ++i) r.v[i] = a.v[i] * b.v[i] + c.v[i];
    return r;
  }
  // Written so that a NaN in `a` yields b, as the x86 max instruction does.
  static F Max(F a, F b) { return Map(a, b, [](float x, float y) { return x > y ? x : y; }); }
  static F Min(F a, F b) { return Map(a, b, [](float x, float y) { return x < y ? x : y; }); }
  static F MaskRange(F s, const int32_t* lo, const int32_t* hi, int32_t j) {
    for (int i = 0; i < kLanes; ++i)
      if (j < lo[i] || j >= hi[i]) s.v[i] = kNegInf;
    return s;
  }
  static bool AnyDifferent(F a, F b) {
    for (int i = 0; i < kLanes; ++i)
      if (!(a.v[i] == b.v[i])) return true;
    return false;
  }
  static F ZeroIfNegInf(F m) {
    for (float& e : m.v)
      if (e == kNegInf) e = 0.0f;
    return m;
  }
  static F KeepNegInf(F x, F r) {
    for (int i = 0; i < kLanes; ++i)
      if (x.v[i] == kNegInf) r.v[i] = kNegInf;
    return r;
  }
  static float Exp2One(float x) {
    x = x > kExp2Lowest ? x : kExp2Lowest;
    const float t = x + kExp2Magic;
    const float f = x - (t - kExp2Magic);
    float p = kExp2C5;
    p = p * f + kExp2C4;
    p = p * f + kExp2C3;
    p = p * f + kExp2C2;
    p = p * f + kExp2C1;
    p = p * f + kExp2C0;
    uint32_t bits;
    std::memcpy(&bits, &t, sizeof(bits));
    bits <<= 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof(scale));
    return p * scale;
  }
  static F Exp2(F x) {
    for (float& e : x.v) e = Exp2One(e);
    return x;
  }
  static void PrefetchL2(const float*) {}
  static F Exp2Clamped(F x) { return Exp2(Min(x, Set1(kExp2Highest))); }

  static float Dot(const float* a, const float* b, int64_t n) {
    float acc[kLanes] = {};
    int64_t d = 0;
    for (; d + kLanes <= n; d += kLanes)
      for (int i = 0; i < kLanes; ++i) acc[i] += a[d + i] * b[d + i];
    float s = 0.0f;
    for (; d < n; ++d) s += a[d] * b[d];
    for (float x : acc) s += x;
    return s;
  }
  static F DotRows(const float* q, const float* k, int64_t stride, int64_t n) {
    F r;
    for (int row = 0; row < kLanes; ++row) r.v[row] = Dot(q, k + row * stride, n);
    return r;
  }
  static void AccumulateRows(float* acc, const float* p, const float* v, int64_t stride, int64_t keys, int64_t n) {
    for (int64_t j = 0; j < keys; ++j)
      for (int64_t d = 0; d < n; ++d) acc[d] += p[j] * v[j * stride + d];
  }
};

void QueryBlock(const AttentionArgs& a, const FlashPlan& plan, const FlashTask& task, float* scratch) {
  ProcessQueryBlock<Portable, 4, 2>(a, plan, task, scratch);
}

void Decode(const AttentionArgs& a, float log2_scale, const DecodeTask& task, int64_t group) {
  DecodeChunk<Portable>(a, log2_scale, task, group);
}

void Exp2Array(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = Portable::Exp2One(x[i]);
}

}  // namespace

const FlashKernels& Kernels() {
  static const FlashKernels kernels{"generic", &QueryBlock, &Decode, &Exp2Array};
  return kernels;
}

}  // namespace attune::attention::flash_generic
