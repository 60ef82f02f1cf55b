// How the scale (and zero point) of a quantized tensor covers it: one for the
// whole tensor, one per index of an axis, or one per block of an axis (opset
// 21). QuantizeLinear, DequantizeLinear, the load-time checks and the passes
// read it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace attune::quantize {

/// How scale (and zero-point) elements cover x: element (outer, a, inner) of
/// x viewed as [outer, axis_len, inner] uses scale
/// (outer · blocks + a / block) · inner_of_scale + inner, where per tensor has
/// everything collapsed to one scale.
struct ScaleLayout {
  enum class Kind { kPerTensor, kPerAxis, kBlocked };
  Kind kind = Kind::kPerTensor;
  int64_t outer = 1, axis_len = 1, inner = 1;
  int64_t block = 1;   // kBlocked: elements per block along the axis
  int64_t blocks = 1;  // kBlocked: ceil(axis_len / block)

  int64_t num_scales() const;
  /// The scale index of x's flat element (o, a, i).
  int64_t ScaleIndex(int64_t o, int64_t a, int64_t i) const {
    switch (kind) {
      case Kind::kPerTensor: return 0;
      case Kind::kPerAxis: return a;
      case Kind::kBlocked: return (o * blocks + a / block) * inner + i;
    }
    return 0;
  }
};

/// The layout of `scale_shape` over `x_shape` with attributes axis and
/// block_size (0 = not blocked). Errors name `label` and say what does not fit:
/// an axis out of range, a per-axis scale of the wrong length, a blocked scale
/// whose shape is not x's with ceil(D / block) on the axis.
absl::StatusOr<ScaleLayout> PlanScaleLayout(const std::string& label, const std::vector<int64_t>& x_shape,
                                            const std::vector<int64_t>& scale_shape, int64_t axis, int64_t block_size);

}  // namespace attune::quantize
