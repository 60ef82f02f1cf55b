// Portable traits for vector_math_impl.h: 4 floats in GCC/Clang vector
// extensions, which the compiler lowers to the baseline ISA's registers (SSE2
// on x86-64, NEON on AArch64) or to scalar code. Without a fused multiply-add
// in the baseline, Fma rounds twice.
#include <cstdint>
#include <cstring>

#include "ops/elementwise/vector_math.h"
#include "ops/elementwise/vector_math_impl.h"

namespace attune::elementwise::vector_math_generic {
namespace {

struct Portable {
  static constexpr int kLanes = 4;
  using F = float __attribute__((vector_size(16)));
  using I = int32_t __attribute__((vector_size(16)));
  using U = uint32_t __attribute__((vector_size(16)));
  using M = I;  // comparison results: all ones or zero per lane

  static F Zero() { return F{}; }
  static F Set1(float x) { return F{} + x; }
  static F Load(const float* p) {
    F r;
    std::memcpy(&r, p, sizeof(r));
    return r;
  }
  static void Store(float* p, F v) { std::memcpy(p, &v, sizeof(v)); }
  static F Add(F a, F b) { return a + b; }
  static F Sub(F a, F b) { return a - b; }
  static F Mul(F a, F b) { return a * b; }
  static F Div(F a, F b) { return a / b; }
  static F Fma(F a, F b, F c) { return a * b + c; }
  // As the x86 instructions: the second operand when either is NaN.
  static F Min(F a, F b) { return Select(a < b, a, b); }
  static F Max(F a, F b) { return Select(a > b, a, b); }
  static F Abs(F a) { return reinterpret_cast<F>(reinterpret_cast<U>(a) & 0x7fffffffu); }
  static F CopySign(F a, F s) {
    return reinterpret_cast<F>((reinterpret_cast<U>(a) & 0x7fffffffu) | (reinterpret_cast<U>(s) & 0x80000000u));
  }
  // Adding 1.5 · 2^23 rounds to an integer (to nearest even); without
  // -ffast-math the compiler may not fold the pair back to x.
  static F Round(F x) { return (x + 12582912.0f) - 12582912.0f; }
  static F Pow2(F n) {
    const I biased = __builtin_convertvector(n, I) + 127;
    return reinterpret_cast<F>(biased << 23);
  }
  static F Exponent(F x) {
    const I field = reinterpret_cast<I>(reinterpret_cast<U>(x) >> 23);
    return __builtin_convertvector(field - 127, F);
  }
  static F Mantissa(F x) {
    return reinterpret_cast<F>((reinterpret_cast<U>(x) & 0x007fffffu) | 0x3f800000u);
  }
  static M Lt(F a, F b) { return a < b; }
  static M Eq(F a, F b) { return a == b; }
  static M IsNan(F a) { return a != a; }
  static F Select(M m, F a, F b) {
    return reinterpret_cast<F>((m & reinterpret_cast<I>(a)) | (~m & reinterpret_cast<I>(b)));
  }
};

}  // namespace

const VectorMathKernels& Kernels() {
  static const VectorMathKernels kernels = vector_math_detail::MakeKernels<Portable>("generic");
  return kernels;
}

}  // namespace attune::elementwise::vector_math_generic
