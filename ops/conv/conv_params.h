// ONNX Conv's attributes and geometry: the attributes read and checked once
// per node, and per run the sizes, pads and output shape every path
// (oneDNN, the reference loop, the shape rule) computes from them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/attribute.h"

namespace attune {

/// Attune's Conv takes 1 to this many spatial dims (oneDNN's limit too).
inline constexpr int kMaxConvSpatialRank = 3;

enum class ConvAutoPad { kNotSet, kSameUpper, kSameLower, kValid };

/// Conv's attributes as the node gives them (opsets 1, 11 and 22 mean the
/// same for float). A list that is absent or empty is nullopt: its default
/// (ones, zeros, or W's spatial dims) depends on the input's rank.
struct ConvAttributes {
  ConvAutoPad auto_pad = ConvAutoPad::kNotSet;
  int64_t group = 1;
  std::optional<std::vector<int64_t>> kernel_shape, strides, dilations, pads;
};

/// Reads and checks the attributes on their own: auto_pad one of the four
/// values ("" is NOTSET), group >= 1, kernel_shape, strides and dilations
/// positive, pads non-negative with an even count, the lists of one length
/// (pads twice it), and no non-zero pads beside an auto_pad other than
/// NOTSET (ONNX: the two cannot be used together). InvalidArgument naming
/// `label` and the attribute otherwise.
absl::StatusOr<ConvAttributes> ReadConvAttributes(const std::string& label, const Attributes& attrs);

/// One spatial axis: its pads (given, or derived from auto_pad) and output size.
struct ConvAxis {
  int64_t pad_begin = 0, pad_end = 0, output = 0;
};

/// The output size of one spatial axis as ONNX defines it:
///   NOTSET: floor((in + pad_begin + pad_end - ((kernel - 1) * dilation + 1)) / stride) + 1
///   VALID:  the same with zero pads
///   SAME_UPPER / SAME_LOWER: ceil(in / stride), padded by
///           max(0, (output - 1) * stride + (kernel - 1) * dilation + 1 - in) in total,
///           the odd one at the end (UPPER) or at the beginning (LOWER).
/// InvalidArgument naming `label` and the axis when the output would be
/// empty or a size overflows int64. Expects kernel, stride, dilation >= 1 and
/// pads >= 0 (ReadConvAttributes checks them).
absl::StatusOr<ConvAxis> ConvOutputAxis(const std::string& label, int axis, int64_t in, int64_t kernel, int64_t stride,
                                        int64_t dilation, int64_t pad_begin, int64_t pad_end, ConvAutoPad auto_pad);

/// Everything a run computes from X's, W's and B's shapes.
struct ConvGeometry {
  int64_t batch = 0;
  int64_t in_channels = 0;   // C
  int64_t out_channels = 0;  // M
  int64_t group = 1;
  /// Per spatial axis (1 to kMaxConvSpatialRank of them).
  std::vector<int64_t> input, kernel, output, strides, dilations, pad_begin, pad_end;

  int spatial_rank() const { return static_cast<int>(input.size()); }
  int64_t in_channels_per_group() const { return in_channels / group; }
  int64_t out_channels_per_group() const { return out_channels / group; }
  /// [N, M, output...].
  std::vector<int64_t> output_shape() const;
};

/// Checks X [N, C, D...], W [M, C/group, k...] and B [M] (`b` null when
/// omitted) against each other and the attributes, and sizes the output.
/// InvalidArgument naming `label` and the tensor or attribute for a bad
/// shape; Unimplemented for more than kMaxConvSpatialRank spatial dims.
absl::StatusOr<ConvGeometry> PlanConv(const std::string& label, const ConvAttributes& attrs,
                                      const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                      const std::vector<int64_t>* b);

}  // namespace attune
