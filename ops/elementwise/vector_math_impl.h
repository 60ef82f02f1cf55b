// The vectorised float32 functions, written once over a SIMD traits type V
// and instantiated by vector_math_{avx512,avx2,generic}.cc. Every function
// here is a template of V and each V lives in an anonymous namespace of its
// own file, so instantiations compiled with different flags never collide.
// (Nothing here may call a non-template inline function or a std:: template
// for the same reason: the linker could keep the AVX-512 copy for everyone.)
//
// V provides: F (kLanes floats), M (a lane mask), Zero, Set1, Load, Store,
// Add, Sub, Mul, Div, Fma(a, b, c) = a*b + c (fused where the ISA has it),
// Min and Max (x86 semantics: the second operand when either is NaN), Abs,
// CopySign(a, s) (|a| with the sign of s), Round (to nearest, ties to even,
// for |x| < 2^22), Pow2(n) (2^n for integer-valued n in [-126, 127]),
// Exponent(x) and Mantissa(x) (x = Mantissa · 2^Exponent with Mantissa in
// [1, 2), for positive normal x), Lt, Eq (ordered: false on NaN), IsNan,
// Select(m, a, b) (a in the lanes of m, else b).
//
// Polynomial coefficients are fitted by fit_polynomials.py (minimax on the
// relative error, then rounded to float one at a time, lowest order first,
// refitting the rest); the error each one reaches in exact arithmetic is
// quoted beside it, and README.md has the errors measured in float.
#pragma once

#include <cstdint>
#include <limits>

#include "ops/elementwise/vector_math.h"

namespace attune::elementwise::vector_math_detail {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kFloatMin = std::numeric_limits<float>::min();  // smallest normal
inline constexpr float kSqrt2 = 1.41421356237309505f;
inline constexpr float kInvSqrt2 = 0.707106781186547524f;

// exp: e^x = 2^n · e^r, n = round(x · log2 e), r = x - n · ln 2 in [-ln2/2,
// ln2/2] (Cody–Waite: n · kLn2Hi is exact for |n| <= 2^15), e^r = 1 + r +
// r² · P(r) with P of degree 4 (3.1e-9).
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kExpP[] = {4.999999404e-01f, 1.666652113e-01f, 4.166826233e-02f, 8.368669078e-03f,
                                  1.382102375e-03f};
// Beyond these the result is 0 (e^-104 < 2^-150, half the smallest
// subnormal) or overflows to inf (e^88.73 > FLT_MAX) on its own.
inline constexpr float kExpLowest = -104.0f;
inline constexpr float kExpHighest = 89.0f;

// log: x = m · 2^e with m in [√½, √2), f = m - 1, log x = e · ln 2 + f - f²/2
// + f³ · P(f) with P of degree 7 (5.8e-9 for log1p(f)).
inline constexpr float kLogP[] = {3.333333135e-01f,  -2.500081956e-01f, 2.000124305e-01f, -1.662341058e-01f,
                                  1.420154124e-01f,  -1.315955371e-01f, 1.276246756e-01f, -7.636900991e-02f};

// tanh: x + x³ · P(x²) for |x| < 0.625, P of degree 4 (4.5e-9); above,
// 1 - 2 / (e^2|x| + 1), where the subtracted term is below 0.45, so the
// subtraction costs at most one bit.
inline constexpr float kTanhSmall = 0.625f;
inline constexpr float kTanhP[] = {-3.333328068e-01f, 1.333141178e-01f, -5.373738334e-02f, 2.063197829e-02f,
                                   -5.697483197e-03f};

// erf: x + x · P(x²) for |x| < 1, P of degree 6 (1.4e-9); above, 1 - erfc.
inline constexpr float kErfP[] = {1.283791661e-01f,  -3.761262596e-01f, 1.128357872e-01f, -2.685334720e-02f,
                                  5.187162198e-03f,  -7.997853099e-04f, 7.806903159e-05f};
// erfc(a) = e^-a² · t · Q(t - 0.55), t = 1/a, for a in [1, 10], Q of degree
// 11 (1.4e-8 relative to erfc; centring t keeps the terms small, so Horner's
// rounding does not add to that). Above 10, erfc(a) < 2.1e-45.
inline constexpr float kErfcCentre = 0.55f;
inline constexpr float kErfcQ[] = {5.023534298e-01f, -1.700351089e-01f, -2.036614902e-02f, 9.835649282e-02f,
                                   -9.689047188e-02f, 4.990126193e-02f, 9.282507002e-03f,  -6.107942015e-02f,
                                   1.079486907e-01f,  -9.240411222e-02f, -5.291949958e-02f, 1.124061570e-01f};
// The largest argument SquareParts splits exactly; e^-a² is 0 from a = 10.2 on.
inline constexpr float kSquareMax = 16.0f;

// Gelu, tanh form: y = √(2/π) · (x + 0.044715 x³).
inline constexpr float kGeluCubic = 0.044715f;
inline constexpr float kTwoSqrt2OverPi = 1.59576912160573071f;  // 2 · √(2/π)

/// c[0] + c[1] x + ... + c[N-1] x^(N-1).
template <class V, int N>
typename V::F Horner(typename V::F x, const float (&c)[N]) {
  typename V::F p = V::Set1(c[N - 1]);
  for (int k = N - 2; k >= 0; --k) p = V::Fma(p, x, V::Set1(c[k]));
  return p;
}

/// NaN lanes of x give NaN (quietened); the others y.
template <class V>
typename V::F KeepNan(typename V::F x, typename V::F y) {
  return V::Select(V::IsNan(x), V::Add(x, x), y);
}

/// scale · e^(x + x_lo) for a small correction x_lo (the low part of an
/// argument that does not fit one float), without the NaN rule. The scale
/// goes in before 2^n, so a subnormal result is rounded once, not rounded
/// and then magnified.
template <class V>
typename V::F ExpParts(typename V::F x, typename V::F x_lo, typename V::F scale) {
  using F = typename V::F;
  x = V::Min(V::Max(x, V::Set1(kExpLowest)), V::Set1(kExpHighest));
  const F n = V::Round(V::Mul(x, V::Set1(kLog2e)));
  F r = V::Fma(n, V::Set1(-kLn2Hi), x);
  r = V::Add(V::Fma(n, V::Set1(-kLn2Lo), r), x_lo);
  const F p = V::Add(V::Fma(Horner<V>(r, kExpP), V::Mul(r, r), r), V::Set1(1.0f));
  // 2^n in two factors: n spans [-150, 129], more than one exponent field.
  // The first product is exact; the second rounds once, also into the
  // subnormal range and to inf.
  const F n1 = V::Round(V::Mul(n, V::Set1(0.5f)));
  return V::Mul(V::Mul(V::Mul(p, scale), V::Pow2(n1)), V::Pow2(V::Sub(n, n1)));
}

template <class V>
typename V::F ExpParts(typename V::F x, typename V::F x_lo) {
  return ExpParts<V>(x, x_lo, V::Set1(1.0f));
}

template <class V>
typename V::F Exp(typename V::F x) {
  return KeepNan<V>(x, ExpParts<V>(x, V::Zero()));
}

/// log x for finite x > 0 (subnormal too when kSubnormal).
template <class V, bool kSubnormal>
typename V::F LogPositive(typename V::F x) {
  using F = typename V::F;
  F e_adjust = V::Zero();
  if constexpr (kSubnormal) {
    const typename V::M sub = V::Lt(x, V::Set1(kFloatMin));
    x = V::Select(sub, V::Mul(x, V::Set1(8388608.0f)), x);  // 2^23
    e_adjust = V::Select(sub, V::Set1(-23.0f), e_adjust);
  }
  F e = V::Add(V::Exponent(x), e_adjust);
  F m = V::Mantissa(x);
  const typename V::M above = V::Lt(V::Set1(kSqrt2), m);
  m = V::Select(above, V::Mul(m, V::Set1(0.5f)), m);
  e = V::Select(above, V::Add(e, V::Set1(1.0f)), e);
  const F f = V::Sub(m, V::Set1(1.0f));  // exact
  const F f2 = V::Mul(f, f);
  F t = V::Mul(V::Mul(f2, f), Horner<V>(f, kLogP));
  t = V::Fma(e, V::Set1(kLn2Lo), t);
  t = V::Fma(f2, V::Set1(-0.5f), t);
  return V::Fma(e, V::Set1(kLn2Hi), V::Add(f, t));
}

template <class V>
typename V::F Log(typename V::F x) {
  using F = typename V::F;
  F y = LogPositive<V, true>(x);
  y = V::Select(V::Eq(x, V::Set1(kInf)), x, y);
  y = V::Select(V::Eq(x, V::Zero()), V::Set1(-kInf), y);  // -0 too
  y = V::Select(V::Lt(x, V::Zero()), V::Set1(kNaN), y);
  return KeepNan<V>(x, y);
}

/// log(1 + u) for u in [0, 1]: log w for the rounded w = 1 + u, plus what the
/// rounding of w dropped, (u - (w - 1)) / w.
template <class V>
typename V::F Log1pUnit(typename V::F u) {
  using F = typename V::F;
  const F w = V::Add(V::Set1(1.0f), u);
  const F lost = V::Div(V::Sub(u, V::Sub(w, V::Set1(1.0f))), w);
  return V::Add(LogPositive<V, false>(w), lost);
}

/// Odd, so computed on |x| and given x's sign at the end (which keeps -0).
template <class V>
typename V::F Tanh(typename V::F x) {
  using F = typename V::F;
  const F a = V::Abs(x);
  const F z = V::Mul(a, a);
  const F small = V::Fma(V::Mul(a, z), Horner<V>(z, kTanhP), a);
  const F e = ExpParts<V>(V::Add(a, a), V::Zero());  // inf for large |x|: the result is then exactly 1
  const F one = V::Set1(1.0f);
  const F large = V::Sub(one, V::Div(V::Set1(2.0f), V::Add(e, one)));
  return KeepNan<V>(x, V::CopySign(V::Select(V::Lt(a, V::Set1(kTanhSmall)), small, large), x));
}

/// 1 / (1 + e^-x) without the NaN rule: with e = e^-|x|, 1 / (1 + e) for
/// x >= 0 and e / (1 + e) below, which neither overflows nor loses the
/// subnormal results.
template <class V>
typename V::F SigmoidParts(typename V::F x) {
  using F = typename V::F;
  const F e = ExpParts<V>(V::Sub(V::Zero(), V::Abs(x)), V::Zero());
  const F numerator = V::Select(V::Lt(x, V::Zero()), e, V::Set1(1.0f));
  return V::Div(numerator, V::Add(V::Set1(1.0f), e));
}

template <class V>
typename V::F Sigmoid(typename V::F x) {
  return KeepNan<V>(x, SigmoidParts<V>(x));
}

/// log(1 + e^x) = max(x, 0) + log1p(e^-|x|).
template <class V>
typename V::F Softplus(typename V::F x) {
  using F = typename V::F;
  const F e = ExpParts<V>(V::Sub(V::Zero(), V::Abs(x)), V::Zero());
  return KeepNan<V>(x, V::Add(V::Max(x, V::Zero()), Log1pUnit<V>(e)));
}

/// erfc(a) for a in [1, 16] given t = 1/a (rounded) and a² = sq + sq_lo
/// exactly: e^-a² comes from both parts, so the rounding of a² (which e^-a²
/// would magnify a² times) is not lost. t · Q(t) is formed first so the last
/// product rounds once where erfc is subnormal. Past a = 10, Q is used a
/// little outside its interval only while e^-a² is not yet 0 (a < 10.2), and
/// the products there are far below FLT_MIN anyway.
template <class V>
typename V::F ErfcTail(typename V::F t, typename V::F sq, typename V::F sq_lo) {
  const typename V::F e = ExpParts<V>(V::Sub(V::Zero(), sq), V::Sub(V::Zero(), sq_lo));
  return V::Mul(V::Mul(t, Horner<V>(V::Sub(t, V::Set1(kErfcCentre)), kErfcQ)), e);
}

/// a² = hi + lo exactly enough for ErfcTail, for 0 <= a <= 16: a = ah + al
/// with ah a multiple of 2^-8 (so ah² has at most 24 bits), al = a - ah
/// exact, and lo = al · (a + ah) whose own rounding is 2^-8 smaller.
template <class V>
void SquareParts(typename V::F a, typename V::F& hi, typename V::F& lo) {
  const typename V::F ah = V::Mul(V::Round(V::Mul(a, V::Set1(256.0f))), V::Set1(1.0f / 256.0f));
  hi = V::Mul(ah, ah);
  lo = V::Mul(V::Sub(a, ah), V::Add(a, ah));
}

template <class V>
typename V::F Erf(typename V::F x) {
  using F = typename V::F;
  const F z = V::Mul(x, x);
  const F small = V::Fma(x, Horner<V>(z, kErfP), x);
  const F a = V::Min(V::Max(V::Abs(x), V::Set1(1.0f)), V::Set1(kSquareMax));
  F hi, lo;
  SquareParts<V>(a, hi, lo);
  const F erfc = ErfcTail<V>(V::Div(V::Set1(1.0f), a), hi, lo);
  const F large = V::CopySign(V::Sub(V::Set1(1.0f), erfc), x);
  return KeepNan<V>(x, V::Select(V::Lt(V::Abs(x), V::Set1(1.0f)), small, large));
}

/// Gelu, erf form: ½ x · (1 + erf(x/√2)). Where x/√2 <= -1 the bracket is
/// erfc(|x|/√2), computed directly (no cancellation); where x/√2 >= 1 it is
/// 2 - erfc(x/√2). (|x|/√2)² is the exact half of |x|², split as in Erf.
/// Below x = -16 the bracket is exactly 0 (so -inf gives NaN, as the
/// definition does).
template <class V>
typename V::F GeluErf(typename V::F x) {
  using F = typename V::F;
  const F ax = V::Abs(x);
  const F u = V::Mul(x, V::Set1(kInvSqrt2));
  const F small = V::Add(V::Set1(1.0f), V::Fma(u, Horner<V>(V::Mul(u, u), kErfP), u));
  const F a = V::Min(V::Max(ax, V::Set1(kSqrt2)), V::Set1(kSquareMax));
  F hi, lo;
  SquareParts<V>(a, hi, lo);
  const F half = V::Set1(0.5f);
  const F erfc = ErfcTail<V>(V::Div(V::Set1(kSqrt2), a), V::Mul(hi, half), V::Mul(lo, half));
  F bracket = V::Select(V::Lt(x, V::Zero()), erfc, V::Sub(V::Set1(2.0f), erfc));
  bracket = V::Select(V::Lt(ax, V::Set1(kSqrt2)), small, bracket);
  return KeepNan<V>(x, V::Mul(V::Mul(half, x), bracket));
}

/// Gelu, tanh form: ½ x · (1 + tanh y) = x · sigmoid(2y), which has no
/// cancellation for negative x. (-inf gives NaN, as the definition does.)
template <class V>
typename V::F GeluTanh(typename V::F x) {
  using F = typename V::F;
  const F x3 = V::Mul(V::Mul(x, x), x);
  const F y2 = V::Mul(V::Fma(x3, V::Set1(kGeluCubic), x), V::Set1(kTwoSqrt2OverPi));
  return KeepNan<V>(x, V::Mul(x, SigmoidParts<V>(y2)));
}

/// Mish: x · tanh(softplus(x)). Below x = -20, tanh(softplus(x)) is e^x to
/// within 1e-9, and x · e^x is formed in one rounding: composing the two
/// would round a subnormal softplus and then multiply its error by |x|.
/// The tail is e^(x + 8) · (x e^-8) (x + 8 is exact there), which reaches
/// the results that are not 0 down to x = -108.6 past ExpParts' clamp; from
/// -112 on it is ±0 (NaN for -inf, as the definition gives).
inline constexpr float kMishTail = -20.0f;
inline constexpr float kMishZero = -112.0f;
inline constexpr float kExpMinus8 = 3.35462628e-04f;

template <class V>
typename V::F Mish(typename V::F x) {
  using F = typename V::F;
  F tail = ExpParts<V>(V::Add(x, V::Set1(8.0f)), V::Zero(), V::Mul(x, V::Set1(kExpMinus8)));
  tail = V::Select(V::Lt(x, V::Set1(kMishZero)), V::Mul(x, V::Zero()), tail);
  return V::Select(V::Lt(x, V::Set1(kMishTail)), tail, V::Mul(x, Tanh<V>(Softplus<V>(x))));
}

/// x^e for e >= 1 by squaring: x·x, (x·x)·x, (x·x)·(x·x), ...
template <class V>
typename V::F PowInt(typename V::F x, int e) {
  typename V::F result = x;
  bool have = false;
  typename V::F base = x;
  while (true) {
    if (e & 1) {
      result = have ? V::Mul(result, base) : base;
      have = true;
    }
    e >>= 1;
    if (e == 0) return result;
    base = V::Mul(base, base);
  }
}

/// HardSwish: x · clamp(x / 6 + 1/2, 0, 1), rounded as ONNX's scalar form
/// is (a quotient, a sum, a product). Max and Min return their second
/// operand when either is NaN, so a NaN x stays NaN.
template <class V>
typename V::F HardSwish(typename V::F x) {
  const typename V::F t = V::Add(V::Div(x, V::Set1(6.0f)), V::Set1(0.5f));
  return V::Mul(x, V::Min(V::Set1(1.0f), V::Max(V::Zero(), t)));
}

template <class V, VectorOp kOp>
typename V::F Apply(typename V::F x) {
  if constexpr (kOp == VectorOp::kExp) return Exp<V>(x);
  else if constexpr (kOp == VectorOp::kLog) return Log<V>(x);
  else if constexpr (kOp == VectorOp::kTanh) return Tanh<V>(x);
  else if constexpr (kOp == VectorOp::kErf) return Erf<V>(x);
  else if constexpr (kOp == VectorOp::kSigmoid) return Sigmoid<V>(x);
  else if constexpr (kOp == VectorOp::kSoftplus) return Softplus<V>(x);
  else if constexpr (kOp == VectorOp::kGeluErf) return GeluErf<V>(x);
  else if constexpr (kOp == VectorOp::kGeluTanh) return GeluTanh<V>(x);
  else if constexpr (kOp == VectorOp::kMish) return Mish<V>(x);
  else return HardSwish<V>(x);
}

/// y[i] = fn(x[i]): whole vectors, then the tail through a padded buffer.
template <class V, class Fn>
void Map(const float* x, float* y, int64_t n, const Fn& fn) {
  constexpr int kLanes = V::kLanes;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) V::Store(y + i, fn(V::Load(x + i)));
  if (i == n) return;
  float buffer[kLanes];
  const int64_t rest = n - i;
  for (int l = 0; l < kLanes; ++l) buffer[l] = l < rest ? x[i + l] : 1.0f;
  V::Store(buffer, fn(V::Load(buffer)));
  for (int64_t l = 0; l < rest; ++l) y[i + l] = buffer[l];
}

template <class V, VectorOp kOp>
void UnaryKernel(const float* x, float* y, int64_t n) {
  Map<V>(x, y, n, [](typename V::F v) { return Apply<V, kOp>(v); });
}

template <class V>
void PowIntKernel(const float* x, float* y, int64_t n, int exponent) {
  if (exponent == 0) {  // pow(x, 0) is 1 for every x, NaN included
    for (int64_t i = 0; i < n; ++i) y[i] = 1.0f;
    return;
  }
  Map<V>(x, y, n, [exponent](typename V::F v) { return PowInt<V>(v, exponent); });
}

/// Swish: x · sigmoid(alpha · x) as the graph Mul(x, Sigmoid(Mul(x, alpha)))
/// rounds it: the product, Sigmoid exactly as the Sigmoid kernel computes it
/// (NaN rule included), then the product with x. alpha = 1 (SiLU) skips the
/// first product, which would not change a bit.
template <class V>
void SwishKernel(const float* x, float* y, int64_t n, float alpha) {
  if (alpha == 1.0f) {
    Map<V>(x, y, n, [](typename V::F v) { return V::Mul(v, Sigmoid<V>(v)); });
    return;
  }
  Map<V>(x, y, n, [alpha](typename V::F v) { return V::Mul(v, Sigmoid<V>(V::Mul(v, V::Set1(alpha)))); });
}

template <class V>
VectorMathKernels MakeKernels(const char* name) {
  VectorMathKernels k{};
  k.name = name;
  k.unary[static_cast<int>(VectorOp::kExp)] = &UnaryKernel<V, VectorOp::kExp>;
  k.unary[static_cast<int>(VectorOp::kLog)] = &UnaryKernel<V, VectorOp::kLog>;
  k.unary[static_cast<int>(VectorOp::kTanh)] = &UnaryKernel<V, VectorOp::kTanh>;
  k.unary[static_cast<int>(VectorOp::kErf)] = &UnaryKernel<V, VectorOp::kErf>;
  k.unary[static_cast<int>(VectorOp::kSigmoid)] = &UnaryKernel<V, VectorOp::kSigmoid>;
  k.unary[static_cast<int>(VectorOp::kSoftplus)] = &UnaryKernel<V, VectorOp::kSoftplus>;
  k.unary[static_cast<int>(VectorOp::kGeluErf)] = &UnaryKernel<V, VectorOp::kGeluErf>;
  k.unary[static_cast<int>(VectorOp::kGeluTanh)] = &UnaryKernel<V, VectorOp::kGeluTanh>;
  k.unary[static_cast<int>(VectorOp::kMish)] = &UnaryKernel<V, VectorOp::kMish>;
  k.unary[static_cast<int>(VectorOp::kHardSwish)] = &UnaryKernel<V, VectorOp::kHardSwish>;
  k.pow_int = &PowIntKernel<V>;
  k.swish = &SwishKernel<V>;
  return k;
}

}  // namespace attune::elementwise::vector_math_detail
