// What QuantizeLinear, DequantizeLinear and the integer products share: the
// integer types and their ranges, scales and zero points read as numbers,
// and the layout that maps an element to its scale (per tensor, per axis,
// or per block along an axis, opset 21).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/quantize/scale_layout.h"

namespace attune::quantize {

/// The range of a quantized integer type; InvalidArgument for a type that is not one.
struct IntRange {
  int32_t min = 0, max = 0;
};
absl::StatusOr<IntRange> RangeOf(ElementType type, const std::string& what);

/// Whether Attune runs quantized values of this type (int8, uint8, int16, uint16).
bool IsQuantizedIntType(ElementType type);

/// The elements of a float32, float16 or bfloat16 scale tensor as float32.
absl::StatusOr<std::vector<float>> ReadScales(const Tensor& scale, const std::string& what);
/// The elements of an int8 / uint8 / int16 / uint16 / int32 tensor as int32.
absl::StatusOr<std::vector<int32_t>> ReadIntegers(const Tensor& t, const std::string& what);

/// round-half-to-even(v) + zero_point, saturated to [range.min, range.max].
/// NaN saturates to range.min, as ONNX Runtime's kernels give it.
inline int32_t QuantizeValue(float v, int32_t zero_point, IntRange range) {
  if (std::isnan(v)) return range.min;
  const float shifted = std::nearbyint(v) + static_cast<float>(zero_point);
  if (shifted <= static_cast<float>(range.min)) return range.min;
  if (shifted >= static_cast<float>(range.max)) return range.max;
  return static_cast<int32_t>(shifted);
}

}  // namespace attune::quantize
