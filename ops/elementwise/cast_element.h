// One element of Cast between the types a tensor holds natively (numbers
// and bool), following the ONNX rules: float -> float gives +-inf out of
// range, integer -> integer wraps, anything -> bool is "!= 0" (NaN is true),
// bool -> number is 0/1, float -> integer truncates toward zero with
// out-of-range values (undefined in ONNX) saturating and NaN giving 0.
#pragma once

#include <type_traits>

#include "ops/common/numeric.h"

namespace attune::elementwise {

template <typename From, typename To>
StorageOf<To> ConvertElement(StorageOf<From> v) {
  using CF = ComputeOf<From>;
  const CF x = Arith<From>::Load(v);
  if constexpr (std::is_same_v<To, bool>) {
    return x != CF{0} ? 1 : 0;
  } else if constexpr (std::is_same_v<To, Float16> || std::is_same_v<To, BFloat16>) {
    // One rounding from double (and wide integers) to the 16-bit type.
    const float f = std::is_same_v<CF, float> ? static_cast<float>(x)
                                              : DoubleToFloatRoundToOdd(static_cast<double>(x));
    return Arith<To>::Store(f);
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(x);
  } else if constexpr (std::is_floating_point_v<CF>) {
    return FloatToIntSaturating<To>(x);
  } else {
    return static_cast<To>(x);  // modular for integers (C++20), 0/1 for bool
  }
}

}  // namespace attune::elementwise
