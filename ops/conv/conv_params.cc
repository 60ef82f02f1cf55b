#include "ops/conv/conv_params.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "attune/tensor.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"

namespace attune {
namespace {

absl::Status BadAttribute(const std::string& label, std::string_view name, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(label, ": attribute ", QuoteName(name), " ", Sv(why)));
}

std::string ListText(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }

// An ints attribute, nullopt when absent or empty; every entry at least `min`.
absl::StatusOr<std::optional<std::vector<int64_t>>> ReadList(const std::string& label, const Attributes& attrs,
                                                             std::string_view name, int64_t min) {
  if (!attrs.Has(name)) return std::nullopt;
  absl::StatusOr<std::vector<int64_t>> v = attrs.GetInts(name);
  if (!v.ok()) return BadAttribute(label, name, "must be a list of ints");
  if (v->empty()) return std::nullopt;
  for (int64_t e : *v)
    if (e < min)
      return BadAttribute(label, name,
                          absl::StrCat(ListText(*v), " has ", e, "; every entry must be ",
                                       min == 0 ? "non-negative" : "positive"));
  return std::optional<std::vector<int64_t>>(*std::move(v));
}

absl::StatusOr<ConvAutoPad> ParseAutoPad(const std::string& label, const Attributes& attrs) {
  absl::StatusOr<std::string> s = attrs.GetString("auto_pad", "NOTSET");
  if (!s.ok()) return BadAttribute(label, "auto_pad", "must be a string");
  if (*s == "NOTSET" || s->empty()) return ConvAutoPad::kNotSet;
  if (*s == "SAME_UPPER") return ConvAutoPad::kSameUpper;
  if (*s == "SAME_LOWER") return ConvAutoPad::kSameLower;
  if (*s == "VALID") return ConvAutoPad::kValid;
  return BadAttribute(label, "auto_pad",
                      absl::StrCat(QuoteName(*s), " is not NOTSET, SAME_UPPER, SAME_LOWER or VALID"));
}

absl::Status Overflow(const std::string& label, int axis) {
  return absl::InvalidArgumentError(
      absl::StrCat(label, ": spatial axis ", axis, ": the padded input or dilated kernel overflows int64"));
}

}  // namespace

absl::StatusOr<ConvAttributes> ReadConvAttributes(const std::string& label, const Attributes& attrs) {
  ConvAttributes a;
  ASSIGN_OR_RETURN(a.auto_pad, ParseAutoPad(label, attrs));
  absl::StatusOr<int64_t> group = attrs.GetInt("group", 1);
  if (!group.ok()) return BadAttribute(label, "group", "must be an int");
  if (*group < 1) return BadAttribute(label, "group", absl::StrCat("is ", *group, "; it must be at least 1"));
  a.group = *group;
  ASSIGN_OR_RETURN(a.kernel_shape, ReadList(label, attrs, "kernel_shape", 1));
  ASSIGN_OR_RETURN(a.strides, ReadList(label, attrs, "strides", 1));
  ASSIGN_OR_RETURN(a.dilations, ReadList(label, attrs, "dilations", 1));
  ASSIGN_OR_RETURN(a.pads, ReadList(label, attrs, "pads", 0));
  if (a.pads && a.pads->size() % 2 != 0)
    return BadAttribute(label, "pads",
                        absl::StrCat(ListText(*a.pads), " has an odd count; it holds a begin and an end per axis"));
  // The lists must agree on the number of spatial axes.
  std::optional<size_t> axes;
  std::string first;
  auto agree = [&](const std::optional<std::vector<int64_t>>& list, std::string_view name, size_t per_axis) {
    if (!list) return absl::OkStatus();
    const size_t n = list->size() / per_axis;
    if (!axes) {
      axes = n;
      first = std::string(name);
      return absl::OkStatus();
    }
    if (n != *axes)
      return BadAttribute(label, name,
                          absl::StrCat(ListText(*list), " is for ", n, " spatial axes, ", QuoteName(first),
                                       " for ", *axes));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(agree(a.kernel_shape, "kernel_shape", 1));
  RETURN_IF_ERROR(agree(a.strides, "strides", 1));
  RETURN_IF_ERROR(agree(a.dilations, "dilations", 1));
  RETURN_IF_ERROR(agree(a.pads, "pads", 2));
  if (a.pads && a.auto_pad != ConvAutoPad::kNotSet &&
      std::any_of(a.pads->begin(), a.pads->end(), [](int64_t p) { return p != 0; }))
    return BadAttribute(label, "pads",
                        absl::StrCat(ListText(*a.pads), " cannot be used with auto_pad other than NOTSET"));
  return a;
}

absl::StatusOr<ConvAxis> ConvOutputAxis(const std::string& label, int axis, int64_t in, int64_t kernel, int64_t stride,
                                        int64_t dilation, int64_t pad_begin, int64_t pad_end, ConvAutoPad auto_pad) {
  int64_t effective_kernel = 0;
  if (__builtin_mul_overflow(kernel - 1, dilation, &effective_kernel) ||
      __builtin_add_overflow(effective_kernel, 1, &effective_kernel))
    return Overflow(label, axis);
  ConvAxis out;
  switch (auto_pad) {
    case ConvAutoPad::kNotSet:
      out.pad_begin = pad_begin;
      out.pad_end = pad_end;
      break;
    case ConvAutoPad::kValid: break;
    case ConvAutoPad::kSameUpper:
    case ConvAutoPad::kSameLower: {
      const int64_t target = in / stride + (in % stride != 0 ? 1 : 0);  // ceil(in / stride)
      int64_t total = 0;
      if (target > 0) {
        if (__builtin_mul_overflow(target - 1, stride, &total) ||
            __builtin_add_overflow(total, effective_kernel - in, &total))
          return Overflow(label, axis);
      }
      total = std::max<int64_t>(total, 0);
      const int64_t small = total / 2, big = total - small;
      out.pad_begin = auto_pad == ConvAutoPad::kSameUpper ? small : big;
      out.pad_end = total - out.pad_begin;
      break;
    }
  }
  int64_t padded = 0;
  if (__builtin_add_overflow(in, out.pad_begin, &padded) || __builtin_add_overflow(padded, out.pad_end, &padded))
    return Overflow(label, axis);
  if (padded < effective_kernel)
    return absl::InvalidArgumentError(absl::StrCat(
        label, ": spatial axis ", axis, " would have no output: input ", in, " padded by ", out.pad_begin, "+",
        out.pad_end, " is shorter than the kernel ", kernel,
        dilation > 1 ? absl::StrCat(" dilated by ", dilation, " (", effective_kernel, ")") : ""));
  out.output = (padded - effective_kernel) / stride + 1;
  return out;
}

std::vector<int64_t> ConvGeometry::output_shape() const {
  std::vector<int64_t> shape{batch, out_channels};
  shape.insert(shape.end(), output.begin(), output.end());
  return shape;
}

absl::StatusOr<ConvGeometry> PlanConv(const std::string& label, const ConvAttributes& attrs,
                                      const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                      const std::vector<int64_t>* b) {
  if (x.size() < 3)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input X ", ShapeToString(x),
                                                   " must have rank 3 or more: [N, C, spatial...]"));
  const int rank = static_cast<int>(x.size());
  const int spatial = rank - 2;
  if (spatial > kMaxConvSpatialRank)
    return absl::UnimplementedError(absl::StrCat(label, ": input X ", ShapeToString(x), " has ", spatial,
                                                 " spatial dims; Attune's Conv takes 1 to ", kMaxConvSpatialRank));
  if (static_cast<int>(w.size()) != rank)
    return absl::InvalidArgumentError(absl::StrCat(label, ": weights W ", ShapeToString(w), " must have X's rank ",
                                                   rank, " (X ", ShapeToString(x), ")"));
  auto check_length = [&](const std::optional<std::vector<int64_t>>& list, std::string_view name,
                          size_t per_axis) -> absl::Status {
    if (list && list->size() != static_cast<size_t>(spatial) * per_axis)
      return BadAttribute(label, name,
                          absl::StrCat(ListText(*list), " has ", list->size(), " entries; X ", ShapeToString(x),
                                       " needs ", spatial * per_axis));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(check_length(attrs.kernel_shape, "kernel_shape", 1));
  RETURN_IF_ERROR(check_length(attrs.strides, "strides", 1));
  RETURN_IF_ERROR(check_length(attrs.dilations, "dilations", 1));
  RETURN_IF_ERROR(check_length(attrs.pads, "pads", 2));

  ConvGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.out_channels = w[0];
  g.group = attrs.group;
  if (g.in_channels % g.group != 0)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input X ", ShapeToString(x), " has ", g.in_channels,
                                                   " channels, not divisible by group ", g.group));
  if (w[1] != g.in_channels / g.group)
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": weights W ", ShapeToString(w), " have ", w[1], " input channels; X ", ShapeToString(x),
                     " with group ", g.group, " needs ", g.in_channels / g.group));
  if (g.out_channels % g.group != 0)
    return absl::InvalidArgumentError(absl::StrCat(label, ": weights W ", ShapeToString(w), " have ", g.out_channels,
                                                   " output channels, not divisible by group ", g.group));
  if (b != nullptr && (b->size() != 1 || (*b)[0] != g.out_channels))
    return absl::InvalidArgumentError(absl::StrCat(label, ": bias B ", ShapeToString(*b), " must be [",
                                                   g.out_channels, "], one per output channel of W ",
                                                   ShapeToString(w)));
  for (int i = 0; i < spatial; ++i) {
    const int64_t k = w[2 + i];
    if (k < 1)
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": weights W ", ShapeToString(w), " have an empty kernel on spatial axis ", i));
    if (attrs.kernel_shape && (*attrs.kernel_shape)[i] != k)
      return BadAttribute(label, "kernel_shape",
                          absl::StrCat(ListText(*attrs.kernel_shape), " differs from the kernel of W ",
                                       ShapeToString(w)));
    const int64_t stride = attrs.strides ? (*attrs.strides)[i] : 1;
    const int64_t dilation = attrs.dilations ? (*attrs.dilations)[i] : 1;
    const int64_t pad_begin = attrs.pads ? (*attrs.pads)[i] : 0;
    const int64_t pad_end = attrs.pads ? (*attrs.pads)[spatial + i] : 0;
    ASSIGN_OR_RETURN(ConvAxis axis,
                     ConvOutputAxis(label, i, x[2 + i], k, stride, dilation, pad_begin, pad_end, attrs.auto_pad));
    g.input.push_back(x[2 + i]);
    g.kernel.push_back(k);
    g.output.push_back(axis.output);
    g.strides.push_back(stride);
    g.dilations.push_back(dilation);
    g.pad_begin.push_back(axis.pad_begin);
    g.pad_end.push_back(axis.pad_end);
  }
  if (!CheckedElementCount(g.output_shape()).ok())
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": output Y ", ShapeToString(g.output_shape()), " has more elements than int64 holds"));
  return g;
}

}  // namespace attune
