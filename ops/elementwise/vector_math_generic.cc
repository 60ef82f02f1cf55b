// Portable traits for vector_math_impl.h: an 8-float "vector" of plain C++
// loops the compiler vectorises for the baseline ISA. Without a fused
// multiply-add, Fma rounds twice.
#include <bit>
#include <cstdint>
#include <cstring>

#include "ops/elementwise/vector_math.h"
#include "ops/elementwise/vector_math_impl.h"

namespace attune::elementwise::vector_math_generic {
namespace {

struct Portable {
  static constexpr int kLanes = 8;
  struct F {
    float v[kLanes];
  };
  struct M {
    uint32_t v[kLanes];  // all ones or zero
  };
  template <class Op>
  static F Map(F a, Op op) {
    F r;
    for (int i = 0; i < kLanes; ++i) r.v[i] = op(a.v[i]);
    return r;
  }
  template <class Op>
  static F Map(F a, F b, Op op) {
    F r;
    for (int i = 0; i < kLanes; ++i) r.v[i] = op(a.v[i], b.v[i]);
    return r;
  }
  template <class Op>
  static M Compare(F a, F b, Op op) {
    M r;
    for (int i = 0; i < kLanes; ++i) r.v[i] = op(a.v[i], b.v[i]) ? ~0u : 0u;
    return r;
  }
  static uint32_t Bits(float x) { return std::bit_cast<uint32_t>(x); }
  static float Float(uint32_t b) { return std::bit_cast<float>(b); }

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
  static F Fma(F a, F b, F c) { return Add(Mul(a, b), c); }
  // As the x86 instructions: the second operand when either is NaN.
  static F Min(F a, F b) { return Map(a, b, [](float x, float y) { return x < y ? x : y; }); }
  static F Max(F a, F b) { return Map(a, b, [](float x, float y) { return x > y ? x : y; }); }
  static F Abs(F a) { return Map(a, [](float x) { return Float(Bits(x) & 0x7fffffffu); }); }
  static F CopySign(F a, F s) {
    return Map(a, s, [](float x, float y) { return Float((Bits(x) & 0x7fffffffu) | (Bits(y) & 0x80000000u)); });
  }
  // Adding 1.5 · 2^23 rounds x to an integer (round to nearest even); without
  // -ffast-math the compiler may not fold the pair back to x.
  static F Round(F a) { return Map(a, [](float x) { return (x + 12582912.0f) - 12582912.0f; }); }
  static F Pow2(F n) {
    return Map(n, [](float x) { return Float(static_cast<uint32_t>(static_cast<int32_t>(x) + 127) << 23); });
  }
  static F Exponent(F a) {
    return Map(a, [](float x) { return static_cast<float>(static_cast<int32_t>(Bits(x) >> 23) - 127); });
  }
  static F Mantissa(F a) { return Map(a, [](float x) { return Float((Bits(x) & 0x007fffffu) | 0x3f800000u); }); }
  static M Lt(F a, F b) { return Compare(a, b, [](float x, float y) { return x < y; }); }
  static M Eq(F a, F b) { return Compare(a, b, [](float x, float y) { return x == y; }); }
  static M IsNan(F a) { return Compare(a, a, [](float x, float y) { return x != y; }); }
  static F Select(M m, F a, F b) {
    F r;
    for (int i = 0; i < kLanes; ++i) r.v[i] = Float((Bits(a.v[i]) & m.v[i]) | (Bits(b.v[i]) & ~m.v[i]));
    return r;
  }
};

}  // namespace

const VectorMathKernels& Kernels() {
  static const VectorMathKernels kernels = vector_math_detail::MakeKernels<Portable>("generic");
  return kernels;
}

}  // namespace attune::elementwise::vector_math_generic
