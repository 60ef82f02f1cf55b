// Per-element-type arithmetic for the reduce family: the type a value is
// computed in (float for half types, int64/uint64 for integers) and how to get there and back.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "attune/element_type.h"

namespace attune::reduce {

template <typename T>
struct Numeric {
  // int8..int64 compute as int64, unsigned (and bool) as uint64, float/double as themselves.
  using Acc = std::conditional_t<std::is_floating_point_v<T>, T,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
  static Acc Load(T v) { return static_cast<Acc>(v); }
  static T Store(Acc v) { return static_cast<T>(v); }
  static Acc Lowest() { return Load(std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                                         : std::numeric_limits<T>::lowest()); }
  static Acc Highest() { return Load(std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                                          : std::numeric_limits<T>::max()); }
};

template <>
struct Numeric<Float16> {
  using Acc = float;
  static float Load(Float16 v) { return HalfToFloat(v); }
  static Float16 Store(float v) { return FloatToHalf(v); }
  static float Lowest() { return -std::numeric_limits<float>::infinity(); }
  static float Highest() { return std::numeric_limits<float>::infinity(); }
};

template <>
struct Numeric<BFloat16> {
  using Acc = float;
  static float Load(BFloat16 v) { return BFloat16ToFloat(v); }
  static BFloat16 Store(float v) { return FloatToBFloat16(v); }
  static float Lowest() { return -std::numeric_limits<float>::infinity(); }
  static float Highest() { return std::numeric_limits<float>::infinity(); }
};

/// a + b and a * b that wrap for integers (no signed-overflow UB) and are plain for floats.
template <typename A>
inline A WrapAdd(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else return a + b;
}
template <typename A>
inline A WrapMul(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else return a * b;
}

/// Calls f(T{}) with T the C++ type of `type`; returns false for types not in the list.
template <typename... Ts, typename F>
bool DispatchType(ElementType type, F&& f) {
  return ((type == ElementTypeOf<Ts>::value ? (f(Ts{}), true) : false) || ...);
}

}  // namespace attune::reduce
