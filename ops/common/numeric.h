// Per-type arithmetic helpers for kernels: the type a value is computed in
// (half types in float), conversions without undefined behaviour, and
// wrapping integer arithmetic.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "attune/element_type.h"

namespace attune {

/// Storage and compute types of an element type. Float16/BFloat16 compute in
/// float; bool is stored as a byte and read as "byte != 0" so that a tensor
/// holding other byte values never produces an invalid bool.
template <typename T>
struct Arith {
  using Storage = T;
  using Compute = T;
  static Compute Load(Storage v) { return v; }
  static Storage Store(Compute v) { return v; }
};
template <>
struct Arith<Float16> {
  using Storage = Float16;
  using Compute = float;
  static float Load(Float16 v) { return HalfToFloat(v); }
  static Float16 Store(float v) { return FloatToHalf(v); }
};
template <>
struct Arith<BFloat16> {
  using Storage = BFloat16;
  using Compute = float;
  static float Load(BFloat16 v) { return BFloat16ToFloat(v); }
  static BFloat16 Store(float v) { return FloatToBFloat16(v); }
};
template <>
struct Arith<bool> {
  using Storage = uint8_t;
  using Compute = bool;
  static bool Load(uint8_t v) { return v != 0; }
  static uint8_t Store(bool v) { return v ? 1 : 0; }
};

template <typename T>
using StorageOf = typename Arith<T>::Storage;
template <typename T>
using ComputeOf = typename Arith<T>::Compute;

template <typename T>
inline constexpr bool kIsFloat = std::is_floating_point_v<ComputeOf<T>>;

/// Float to integer: truncates toward zero and saturates at the type's range;
/// NaN gives 0. (ONNX leaves out-of-range results undefined; C++ makes them
/// undefined behaviour, so we pick the saturating answer.)
template <typename I, typename F>
I FloatToIntSaturating(F x) {
  static_assert(std::is_integral_v<I> && std::is_floating_point_v<F>);
  if (std::isnan(x)) return 0;
  // Bounds as exact powers of two: lowest() is -2^(n-1) or 0, max()+1 is 2^n or 2^(n-1).
  constexpr F kLow = static_cast<F>(std::numeric_limits<I>::lowest());
  constexpr F kHighExclusive = static_cast<F>(std::numeric_limits<I>::max() / 2 + 1) * F{2};
  if (x <= kLow) return std::numeric_limits<I>::lowest();
  if (x >= kHighExclusive) return std::numeric_limits<I>::max();
  return static_cast<I>(x);
}

/// double -> float16/bfloat16 with one rounding: round to odd into float
/// first (float keeps enough extra bits), then round to nearest even.
inline float DoubleToFloatRoundToOdd(double x) {
  float f = static_cast<float>(x);
  if (!std::isfinite(f) || static_cast<double>(f) == x) return f;
  // Step to the neighbour towards zero if rounding went away from it, then
  // force the last bit to 1 (round to odd).
  if (std::fabs(static_cast<double>(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

/// Unsigned type wide enough that C++ integer promotion cannot overflow a
/// signed int (uint16 * uint16 promotes to int and may overflow).
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

/// Two's complement wrapping add/sub/mul/negate for any integer type.
template <typename T>
T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
}
template <typename T>
T WrapSub(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
}
template <typename T>
T WrapMul(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
}
template <typename T>
T WrapNeg(T a) {
  return static_cast<T>(WrapType<T>{0} - static_cast<WrapType<T>>(a));
}

}  // namespace attune
