// Loads and stores between a tensor element type and the wider type that
// reference loops accumulate in.
#pragma once

#include <cstdint>
#include <type_traits>

#include "attune/element_type.h"

namespace attune::matmul_internal {

/// float for the 16-bit floats and float, double for double, and uint64 for
/// integers (unsigned so that overflow wraps like two's complement instead of
/// being undefined).
template <typename T>
using AccumulatorOf = std::conditional_t<
    std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16> || std::is_same_v<T, float>, float,
    std::conditional_t<std::is_same_v<T, double>, double, uint64_t>>;

template <typename T>
inline AccumulatorOf<T> Widen(T v) {
  if constexpr (std::is_same_v<T, Float16>) return HalfToFloat(v);
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16ToFloat(v);
  else if constexpr (std::is_integral_v<T>) return static_cast<uint64_t>(static_cast<int64_t>(v));
  else return v;
}

template <typename T>
inline T Narrow(AccumulatorOf<T> v) {
  if constexpr (std::is_same_v<T, Float16>) return FloatToHalf(v);
  else if constexpr (std::is_same_v<T, BFloat16>) return FloatToBFloat16(v);
  else return static_cast<T>(v);
}

}  // namespace attune::matmul_internal
