// ONNX Resize (opsets 10 to 19) and Upsample (7 to 9): the attributes, the
// output size of every axis, and per axis the source coordinate of every
// output position, as ONNX's reference defines them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/attribute.h"

namespace attune {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class CoordinateMode { kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric,
                            kTfCropAndResize };
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };
enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

struct ResizeAttributes {
  ResizeMode mode = ResizeMode::kNearest;
  CoordinateMode coordinate = CoordinateMode::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  AspectPolicy aspect = AspectPolicy::kStretch;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0;
  bool antialias = false;
  std::vector<int64_t> axes;  // empty: every axis
  bool upsample = false;      // Upsample: scales as an attribute (opset 7) or input 1
  std::vector<float> upsample_scales;
};

/// Reads the attributes of a Resize (or, with `upsample`, Upsample) node at
/// `opset`: before Resize-11 the coordinates are asymmetric and nearest
/// rounds down, as Upsample's were.
absl::StatusOr<ResizeAttributes> ReadResizeAttributes(const std::string& label, int opset, bool upsample,
                                                      const Attributes& attrs);

/// Per axis of X: the output length, the scale and the roi (start, end).
struct ResizePlan {
  std::vector<int64_t> input, output;
  std::vector<double> scale, roi_start, roi_end;
};

/// Sizes the output from X's shape and the roi, scales and sizes inputs
/// (null or empty when not given; exactly one of scales and sizes must be).
absl::StatusOr<ResizePlan> PlanResize(const std::string& label, const ResizeAttributes& a,
                                      const std::vector<int64_t>& x, const Tensor* roi, const Tensor* scales,
                                      const Tensor* sizes);

/// The source coordinate of output position `o` on axis `axis`.
double SourceCoordinate(const ResizeAttributes& a, const ResizePlan& p, int axis, int64_t o);

}  // namespace attune
