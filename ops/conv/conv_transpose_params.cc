#include "ops/conv/conv_transpose_params.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"

namespace attune {
namespace {

absl::Status Bad(const std::string& label, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(label, ": ", Sv(what)));
}

absl::StatusOr<std::optional<std::vector<int64_t>>> OptionalInts(const std::string& label, const Attributes& attrs,
                                                                 std::string_view name, int64_t min) {
  if (!attrs.Has(name)) return std::nullopt;
  absl::StatusOr<std::vector<int64_t>> v = attrs.GetInts(name);
  if (!v.ok()) return Bad(label, absl::StrCat("attribute '", Sv(name), "' must be a list of ints"));
  if (v->empty()) return std::nullopt;
  for (int64_t e : *v)
    if (e < min || e > (int64_t{1} << 40))
      return Bad(label, absl::StrCat("attribute '", Sv(name), "' has ", e, "; entries must be at least ", min));
  return std::optional<std::vector<int64_t>>(*std::move(v));
}

}  // namespace

absl::StatusOr<ConvTransposeAttributes> ReadConvTransposeAttributes(const std::string& label, const Attributes& attrs) {
  ConvTransposeAttributes a;
  ASSIGN_OR_RETURN(a.conv, ReadConvAttributes(label, attrs));
  ASSIGN_OR_RETURN(a.output_padding, OptionalInts(label, attrs, "output_padding", 0));
  ASSIGN_OR_RETURN(a.output_shape, OptionalInts(label, attrs, "output_shape", 1));
  return a;
}

std::vector<int64_t> ConvTransposeGeometry::output_shape() const {
  std::vector<int64_t> s{batch, out_channels};
  s.insert(s.end(), output.begin(), output.end());
  return s;
}

absl::StatusOr<ConvAxis> ConvTransposeOutputAxis(const std::string& label, int i, const ConvTransposeAttributes& a,
                                                 int spatial, int64_t in, int64_t kernel) {
  const ConvAttributes& c = a.conv;
  const int64_t stride = c.strides ? (*c.strides)[i] : 1;
  const int64_t dilation = c.dilations ? (*c.dilations)[i] : 1;
  const int64_t out_pad = a.output_padding ? (*a.output_padding)[i] : 0;
  if (out_pad >= std::max(stride, dilation))
    return Bad(label, absl::StrCat("attribute 'output_padding' on spatial axis ", i, " is ", out_pad,
                                   "; it must be smaller than the stride or the dilation"));
  constexpr int64_t kLimit = int64_t{1} << 40;
  if (in > kLimit || kernel > kLimit || stride > kLimit || dilation > kLimit)
    return Bad(label, absl::StrCat("spatial axis ", i, ": a size is too large"));
  const int64_t full = stride * (in - 1) + out_pad + (kernel - 1) * dilation + 1;
  ConvAxis r;
  const bool same = c.auto_pad == ConvAutoPad::kSameUpper || c.auto_pad == ConvAutoPad::kSameLower;
  if (a.output_shape || same) {
    r.output = a.output_shape ? (*a.output_shape)[a.output_shape->size() - spatial + i] : in * stride;
    // A negative total (an output_shape beyond what the pads allow) pads the
    // output with bias values; the split floors as ONNX's reference does.
    const int64_t total = full - r.output;
    const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
    r.pad_begin = c.auto_pad == ConvAutoPad::kSameUpper ? half : total - half;
    r.pad_end = total - r.pad_begin;
  } else {
    if (c.auto_pad == ConvAutoPad::kNotSet && c.pads) {
      r.pad_begin = (*c.pads)[i];
      r.pad_end = (*c.pads)[spatial + i];
    }
    r.output = full - r.pad_begin - r.pad_end;
  }
  if (r.output < 1) return Bad(label, absl::StrCat("spatial axis ", i, ": the output would be empty"));
  return r;
}

absl::StatusOr<ConvTransposeGeometry> PlanConvTranspose(const std::string& label, const ConvTransposeAttributes& a,
                                                        const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                                        const std::vector<int64_t>* b) {
  if (x.size() < 3)
    return Bad(label, absl::StrCat("input X ", ShapeToString(x), " must have rank 3 or more ([N, C, D...])"));
  if (w.size() != x.size())
    return Bad(label, absl::StrCat("weights W ", ShapeToString(w), " must have X's rank ", x.size()));
  const int spatial = static_cast<int>(x.size()) - 2;
  const ConvAttributes& c = a.conv;
  auto check_len = [&](const std::optional<std::vector<int64_t>>& list, const char* name, size_t want) {
    if (list && list->size() != want)
      return Bad(label, absl::StrCat("attribute '", name, "' has ", list->size(), " entries; X ", ShapeToString(x),
                                     " needs ", want));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(check_len(c.kernel_shape, "kernel_shape", spatial));
  RETURN_IF_ERROR(check_len(c.strides, "strides", spatial));
  RETURN_IF_ERROR(check_len(c.dilations, "dilations", spatial));
  RETURN_IF_ERROR(check_len(c.pads, "pads", 2 * spatial));
  RETURN_IF_ERROR(check_len(a.output_padding, "output_padding", spatial));
  if (a.output_shape && a.output_shape->size() != static_cast<size_t>(spatial) &&
      a.output_shape->size() != static_cast<size_t>(spatial + 2))
    return Bad(label, absl::StrCat("attribute 'output_shape' has ", a.output_shape->size(), " entries; X ",
                                   ShapeToString(x), " needs ", spatial));
  ConvTransposeGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.group = c.group;
  if (w[0] != x[1] || x[1] % c.group != 0)
    return Bad(label, absl::StrCat("weights W ", ShapeToString(w), " must have X's ", x[1],
                                   " channels first, divisible by group ", c.group));
  g.out_channels = w[1] * c.group;
  if (b != nullptr && (b->size() != 1 || (*b)[0] != g.out_channels))
    return Bad(label, absl::StrCat("bias B ", ShapeToString(*b), " must be [", g.out_channels, "]"));
  for (int i = 0; i < spatial; ++i) {
    const int64_t kernel = w[2 + i];
    if (c.kernel_shape && (*c.kernel_shape)[i] != kernel)
      return Bad(label, absl::StrCat("kernel_shape differs from W ", ShapeToString(w)));
    ASSIGN_OR_RETURN(ConvAxis axis, ConvTransposeOutputAxis(label, i, a, spatial, x[2 + i], kernel));
    g.input.push_back(x[2 + i]);
    g.kernel.push_back(kernel);
    g.strides.push_back(c.strides ? (*c.strides)[i] : 1);
    g.dilations.push_back(c.dilations ? (*c.dilations)[i] : 1);
    g.pad_begin.push_back(axis.pad_begin);
    g.pad_end.push_back(axis.pad_end);
    g.output.push_back(axis.output);
  }
  return g;
}

}  // namespace attune
