// ConvTranspose's attributes and geometry, shared by the kernel and the shape rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/attribute.h"
#include "ops/conv/conv_params.h"

namespace attune {

struct ConvTransposeAttributes {
  ConvAttributes conv;  // auto_pad, group, kernel_shape, strides, dilations, pads
  std::optional<std::vector<int64_t>> output_padding, output_shape;
};

/// Reads and checks the attributes (output_padding non-negative).
absl::StatusOr<ConvTransposeAttributes> ReadConvTransposeAttributes(const std::string& label, const Attributes& attrs);

struct ConvTransposeGeometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  std::vector<int64_t> input, kernel, output, strides, dilations, pad_begin, pad_end;
  int spatial_rank() const { return static_cast<int>(input.size()); }
  std::vector<int64_t> output_shape() const;
};

/// One axis's output size and pads. Given output_shape (or under SAME_*,
/// in * stride) the total padding stride * (in - 1) + output_padding +
/// dilated kernel - output is split with the odd part at the beginning,
/// except under SAME_UPPER, at the end (floored: a negative total, an output
/// larger than the pads allow, extends the end with bias values); otherwise the output is stride *
/// (in - 1) + output_padding + dilated kernel - pads.
absl::StatusOr<ConvAxis> ConvTransposeOutputAxis(const std::string& label, int axis, const ConvTransposeAttributes& a,
                                                 int spatial, int64_t in, int64_t kernel);

/// Checks X [N, C, D...], W [C, M / group, k...] and B [M] and sizes the output.
absl::StatusOr<ConvTransposeGeometry> PlanConvTranspose(const std::string& label, const ConvTransposeAttributes& a,
                                                        const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                                        const std::vector<int64_t>* b);

}  // namespace attune
