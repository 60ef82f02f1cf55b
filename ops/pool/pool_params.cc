#include "ops/pool/pool_params.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/escape.h"
#include "core/common/strings.h"

namespace attune {
namespace {

absl::Status Bad(const std::string& label, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(label, ": ", Sv(what)));
}

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

}  // namespace

absl::StatusOr<double> ReadLpPoolP(const std::string& label, int opset, const Attributes& attrs) {
  double p = 2;
  if (opset < 2 && attrs.Has("p")) {
    ASSIGN_OR_RETURN(float pf, attrs.GetFloat("p"));
    p = pf;
  } else {
    ASSIGN_OR_RETURN(int64_t pi, attrs.GetInt("p", 2));
    p = static_cast<double>(pi);
  }
  if (!(p > 0)) return Bad(label, absl::StrCat("attribute 'p' is ", p, "; it must be positive"));
  return p;
}

absl::StatusOr<PoolAttributes> ReadPoolAttributes(const std::string& label, std::string_view op, int opset,
                                                  const Attributes& attrs) {
  PoolAttributes a;
  ASSIGN_OR_RETURN(a.window, ReadConvAttributes(label, attrs));
  if (!a.window.kernel_shape) return Bad(label, "attribute 'kernel_shape' is required");
  ASSIGN_OR_RETURN(int64_t ceil_mode, attrs.GetInt("ceil_mode", 0));
  a.ceil_mode = ceil_mode != 0;
  if (op == "AveragePool") {
    ASSIGN_OR_RETURN(int64_t include, attrs.GetInt("count_include_pad", 0));
    a.count_include_pad = include != 0;
  }
  if (op == "MaxPool") {
    ASSIGN_OR_RETURN(a.storage_order, attrs.GetInt("storage_order", 0));
    if (a.storage_order != 0 && a.storage_order != 1)
      return Bad(label, absl::StrCat("attribute 'storage_order' is ", a.storage_order, "; it must be 0 or 1"));
  }
  if (op == "LpPool") {
    ASSIGN_OR_RETURN(a.p, ReadLpPoolP(label, opset, attrs));
  }
  const size_t axes = a.window.kernel_shape->size();
  if ((a.window.strides && a.window.strides->size() != axes) ||
      (a.window.dilations && a.window.dilations->size() != axes) ||
      (a.window.pads && a.window.pads->size() != 2 * axes))
    return Bad(label, absl::StrCat("strides, dilations and pads must have one entry (pads two) per axis of ",
                                   "kernel_shape's ", axes));
  return a;
}

absl::StatusOr<ConvAxis> PoolOutputAxis(const std::string& label, int axis, int64_t in, int64_t kernel,
                                        int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end,
                                        ConvAutoPad auto_pad, bool ceil_mode) {
  ConvAxis r;
  constexpr int64_t kLimit = int64_t{1} << 40;
  if (in > kLimit || kernel > kLimit || dilation > kLimit || stride > kLimit || pad_begin > kLimit ||
      pad_end > kLimit)
    return Bad(label, absl::StrCat("spatial axis ", axis, ": a size, kernel, stride, dilation or pad is too large"));
  const int64_t span = (kernel - 1) * dilation + 1;
  if (auto_pad == ConvAutoPad::kSameUpper || auto_pad == ConvAutoPad::kSameLower) {
    r.output = CeilDiv(in, stride);
    const int64_t total = std::max<int64_t>(0, (r.output - 1) * stride + span - in);
    r.pad_begin = auto_pad == ConvAutoPad::kSameUpper ? total / 2 : total - total / 2;
    r.pad_end = total - r.pad_begin;
  } else {
    if (auto_pad == ConvAutoPad::kNotSet) {
      r.pad_begin = pad_begin;
      r.pad_end = pad_end;
    }
    const int64_t room = in + r.pad_begin + r.pad_end - span;
    if (room < 0)
      return Bad(label, absl::StrCat("spatial axis ", axis, ": the window of ", span, " does not fit the input of ",
                                     in, " with pads ", r.pad_begin, " and ", r.pad_end));
    r.output = (ceil_mode ? CeilDiv(room, stride) : room / stride) + 1;
    // A window must start inside the input or the begin padding.
    if (ceil_mode && (r.output - 1) * stride >= in + r.pad_begin) --r.output;
  }
  if (r.output < 1) return Bad(label, absl::StrCat("spatial axis ", axis, ": the output would be empty"));
  return r;
}

std::vector<int64_t> PoolGeometry::output_shape() const {
  std::vector<int64_t> s{batch, channels};
  s.insert(s.end(), output.begin(), output.end());
  return s;
}

absl::StatusOr<PoolGeometry> PlanPool(const std::string& label, const PoolAttributes& attrs,
                                      const std::vector<int64_t>& x) {
  const ConvAttributes& w = attrs.window;
  const size_t spatial = w.kernel_shape->size();
  if (x.size() != spatial + 2)
    return Bad(label, absl::StrCat("input X ", ShapeToString(x), " must have rank ", spatial + 2,
                                   " for kernel_shape's ", spatial, " axes"));
  PoolGeometry g;
  g.batch = x[0];
  g.channels = x[1];
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t kernel = (*w.kernel_shape)[i];
    const int64_t stride = w.strides ? (*w.strides)[i] : 1;
    const int64_t dilation = w.dilations ? (*w.dilations)[i] : 1;
    const int64_t pb = w.pads ? (*w.pads)[i] : 0, pe = w.pads ? (*w.pads)[spatial + i] : 0;
    if (pb >= kernel * dilation || pe >= kernel * dilation)
      return Bad(label, absl::StrCat("attribute 'pads' on spatial axis ", i, " (", pb, ", ", pe,
                                     ") must be smaller than the dilated kernel"));
    ASSIGN_OR_RETURN(ConvAxis a, PoolOutputAxis(label, static_cast<int>(i), x[2 + i], kernel, stride, dilation, pb,
                                                pe, w.auto_pad, attrs.ceil_mode));
    g.input.push_back(x[2 + i]);
    g.kernel.push_back(kernel);
    g.strides.push_back(stride);
    g.dilations.push_back(dilation);
    g.pad_begin.push_back(a.pad_begin);
    g.pad_end.push_back(a.pad_end);
    g.output.push_back(a.output);
  }
  return g;
}

}  // namespace attune
