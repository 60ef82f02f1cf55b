#include "ops/resize/resize_params.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"

namespace attune {
namespace {

absl::Status Bad(const std::string& label, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(label, ": ", Sv(what)));
}

template <typename E>
absl::StatusOr<E> Choose(const std::string& label, const Attributes& attrs, std::string_view name,
                         std::string_view fallback, std::initializer_list<std::pair<const char*, E>> choices) {
  ASSIGN_OR_RETURN(std::string v, attrs.GetString(name, std::string(fallback)));
  for (const auto& [text, value] : choices)
    if (v == text) return value;
  return Bad(label, absl::StrCat("attribute '", Sv(name), "' has the unknown value ", QuoteName(v)));
}

// A float or int64 vector input as doubles.
absl::StatusOr<std::vector<double>> Numbers(const std::string& label, const char* name, const Tensor& t) {
  std::vector<double> out;
  if (t.shape().size() != 1)
    return Bad(label, absl::StrCat("input ", name, " ", ShapeToString(t.shape()), " must be 1-D"));
  const int64_t n = t.num_elements();
  switch (t.type()) {
    case ElementType::kFloat32:
      for (int64_t i = 0; i < n; ++i) out.push_back(t.data<float>()[i]);
      break;
    case ElementType::kFloat64:
      for (int64_t i = 0; i < n; ++i) out.push_back(t.data<double>()[i]);
      break;
    case ElementType::kFloat16:
      for (int64_t i = 0; i < n; ++i) out.push_back(HalfToFloat(t.data<Float16>()[i]));
      break;
    case ElementType::kInt64:
      for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<double>(t.data<int64_t>()[i]));
      break;
    default:
      return Bad(label, absl::StrCat("input ", name, " has element type ", ElementTypeName(t.type())));
  }
  return out;
}

bool Given(const Tensor* t) { return t != nullptr && t->num_elements() > 0; }

}  // namespace

absl::StatusOr<ResizeAttributes> ReadResizeAttributes(const std::string& label, int opset, bool upsample,
                                                      const Attributes& attrs) {
  ResizeAttributes a;
  a.upsample = upsample;
  ASSIGN_OR_RETURN(std::string mode, attrs.GetString("mode", "nearest"));
  if (mode == "nearest") a.mode = ResizeMode::kNearest;
  else if (mode == "linear" || mode == "bilinear" || (upsample && mode == "trilinear")) a.mode = ResizeMode::kLinear;
  else if (mode == "cubic" && !upsample && opset >= 11) a.mode = ResizeMode::kCubic;
  else return Bad(label, absl::StrCat("attribute 'mode' has the unknown value ", QuoteName(mode)));
  if (upsample || opset < 11) {
    a.coordinate = CoordinateMode::kAsymmetric;
    a.nearest = NearestMode::kFloor;
    if (upsample && opset < 9) {
      ASSIGN_OR_RETURN(a.upsample_scales, attrs.GetFloats("scales"));
    }
    return a;
  }
  ASSIGN_OR_RETURN(a.coordinate, Choose<CoordinateMode>(label, attrs, "coordinate_transformation_mode", "half_pixel",
                                                        {{"half_pixel", CoordinateMode::kHalfPixel},
                                                         {"half_pixel_symmetric", CoordinateMode::kHalfPixelSymmetric},
                                                         {"pytorch_half_pixel", CoordinateMode::kPytorchHalfPixel},
                                                         {"align_corners", CoordinateMode::kAlignCorners},
                                                         {"asymmetric", CoordinateMode::kAsymmetric},
                                                         {"tf_crop_and_resize", CoordinateMode::kTfCropAndResize}}));
  ASSIGN_OR_RETURN(a.nearest, Choose<NearestMode>(label, attrs, "nearest_mode", "round_prefer_floor",
                                                  {{"round_prefer_floor", NearestMode::kRoundPreferFloor},
                                                   {"round_prefer_ceil", NearestMode::kRoundPreferCeil},
                                                   {"floor", NearestMode::kFloor},
                                                   {"ceil", NearestMode::kCeil}}));
  ASSIGN_OR_RETURN(a.aspect, Choose<AspectPolicy>(label, attrs, "keep_aspect_ratio_policy", "stretch",
                                                  {{"stretch", AspectPolicy::kStretch},
                                                   {"not_larger", AspectPolicy::kNotLarger},
                                                   {"not_smaller", AspectPolicy::kNotSmaller}}));
  ASSIGN_OR_RETURN(float coeff, attrs.GetFloat("cubic_coeff_a", -0.75f));
  a.cubic_coeff_a = coeff;
  ASSIGN_OR_RETURN(int64_t exclude, attrs.GetInt("exclude_outside", 0));
  a.exclude_outside = exclude != 0;
  ASSIGN_OR_RETURN(float extrapolation, attrs.GetFloat("extrapolation_value", 0.0f));
  a.extrapolation_value = extrapolation;
  ASSIGN_OR_RETURN(int64_t antialias, attrs.GetInt("antialias", 0));
  a.antialias = antialias != 0;
  ASSIGN_OR_RETURN(a.axes, attrs.GetInts("axes", {}));
  return a;
}

absl::StatusOr<ResizePlan> PlanResize(const std::string& label, const ResizeAttributes& a,
                                      const std::vector<int64_t>& x, const Tensor* roi, const Tensor* scales,
                                      const Tensor* sizes) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> axes = a.axes;
  for (int64_t& ax : axes) {
    if (ax < -rank || ax >= rank)
      return Bad(label, absl::StrCat("attribute 'axes' has ", ax, ", out of range for X ", ShapeToString(x)));
    if (ax < 0) ax += rank;
  }
  for (size_t i = 0; i < axes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (axes[i] == axes[j]) return Bad(label, "attribute 'axes' repeats an axis");
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  const size_t n = axes.size();
  ResizePlan p;
  p.input = x;
  p.output = x;
  p.scale.assign(rank, 1.0);
  p.roi_start.assign(rank, 0.0);
  p.roi_end.assign(rank, 1.0);
  std::vector<double> scale_list;
  if (a.upsample && !a.upsample_scales.empty()) scale_list.assign(a.upsample_scales.begin(), a.upsample_scales.end());
  else if (Given(scales)) {
    ASSIGN_OR_RETURN(scale_list, Numbers(label, "scales", *scales));
  }
  const bool have_sizes = Given(sizes);
  if (!scale_list.empty() && have_sizes) return Bad(label, "inputs scales and sizes are both given; give one");
  if (scale_list.empty() && !have_sizes) return Bad(label, "neither input scales nor sizes is given");
  if (Given(roi) && a.coordinate == CoordinateMode::kTfCropAndResize) {
    ASSIGN_OR_RETURN(std::vector<double> r, Numbers(label, "roi", *roi));
    if (r.size() != 2 * n)
      return Bad(label, absl::StrCat("input roi has ", r.size(), " entries; it needs ", 2 * n));
    for (size_t i = 0; i < n; ++i) p.roi_start[axes[i]] = r[i], p.roi_end[axes[i]] = r[n + i];
  }
  if (!scale_list.empty()) {
    if (scale_list.size() != n)
      return Bad(label, absl::StrCat("scales has ", scale_list.size(), " entries; X ", ShapeToString(x), " needs ", n));
    for (size_t i = 0; i < n; ++i) {
      const double s = scale_list[i];
      if (!(s > 0) || !std::isfinite(s)) return Bad(label, absl::StrCat("scales has ", s, "; scales must be positive"));
      const double out = std::floor(s * static_cast<double>(x[axes[i]]));
      if (out > static_cast<double>(int64_t{1} << 40)) return Bad(label, "scales give an output that is too large");
      p.scale[axes[i]] = s;
      p.output[axes[i]] = static_cast<int64_t>(out);
    }
  } else {
    if (sizes->type() != ElementType::kInt64) return Bad(label, "input sizes must be int64");
    if (sizes->num_elements() != static_cast<int64_t>(n) || sizes->shape().size() != 1)
      return Bad(label, absl::StrCat("sizes ", ShapeToString(sizes->shape()), " must hold ", n, " entries for X ",
                                     ShapeToString(x)));
    const int64_t* sz = sizes->data<int64_t>();
    for (size_t i = 0; i < n; ++i)
      if (sz[i] < 0 || sz[i] > (int64_t{1} << 40)) return Bad(label, absl::StrCat("sizes has ", sz[i]));
    if (a.aspect == AspectPolicy::kStretch) {
      for (size_t i = 0; i < n; ++i) {
        p.output[axes[i]] = sz[i];
        p.scale[axes[i]] = x[axes[i]] > 0 ? static_cast<double>(sz[i]) / static_cast<double>(x[axes[i]]) : 1.0;
      }
    } else {
      double s = a.aspect == AspectPolicy::kNotLarger ? INFINITY : 0;
      for (size_t i = 0; i < n; ++i) {
        if (x[axes[i]] == 0) continue;
        const double r = static_cast<double>(sz[i]) / static_cast<double>(x[axes[i]]);
        s = a.aspect == AspectPolicy::kNotLarger ? std::min(s, r) : std::max(s, r);
      }
      if (!std::isfinite(s)) s = 1;
      for (size_t i = 0; i < n; ++i) {
        p.scale[axes[i]] = s;
        p.output[axes[i]] = static_cast<int64_t>(std::nearbyint(s * static_cast<double>(x[axes[i]])));
      }
    }
  }
  return p;
}

double SourceCoordinate(const ResizeAttributes& a, const ResizePlan& p, int axis, int64_t o) {
  const double in = static_cast<double>(p.input[axis]);
  const double s = p.scale[axis];
  const double out_f = s * in;  // the output length before rounding, as ONNX's reference uses it
  const double x = static_cast<double>(o);
  switch (a.coordinate) {
    case CoordinateMode::kAlignCorners:
      return out_f == 1 ? 0.0 : x * (in - 1) / (out_f - 1);
    case CoordinateMode::kAsymmetric:
      return x / s;
    case CoordinateMode::kTfCropAndResize: {
      const double start = p.roi_start[axis], end = p.roi_end[axis];
      const double base = start * (in - 1);
      if (p.output[axis] == 1) return base + (end - start) * (in - 1) / 2;
      return base + x * (end - start) * (in - 1) / static_cast<double>(p.output[axis] - 1);
    }
    case CoordinateMode::kPytorchHalfPixel:
      return out_f == 1 ? -0.5 : (x + 0.5) / s - 0.5;
    case CoordinateMode::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(p.output[axis]) / out_f;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (x + 0.5) / s - 0.5;
    }
    case CoordinateMode::kHalfPixel:
      break;
  }
  return (x + 0.5) / s - 0.5;
}

}  // namespace attune
