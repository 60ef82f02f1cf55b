// Shape rule of Conv: N from X, M from W, and each spatial dim as the kernel
// sizes it (ops/conv/conv_params.h) when X's dim is a number. A symbolic dim
// with stride 1 stays an expression (in + pads - dilated kernel + 1, or the
// dim itself under SAME_*); with a larger stride the size is a floor
// division, which dims do not express, so it gets a fresh symbol.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/shape_rules/rules.h"
#include "engine/passes/symbolic_dim.h"
#include "ops/conv/conv_params.h"

namespace attune::shape_rules {
namespace {

// The size of spatial axis i of the output, or nullopt when no dim can name it.
absl::StatusOr<std::optional<Dim>> SpatialDim(const std::string& label, const ConvAttributes& attrs, int i,
                                              int spatial, const Dim& in, std::optional<int64_t> kernel) {
  if (!kernel) return std::nullopt;
  const int64_t stride = attrs.strides ? (*attrs.strides)[i] : 1;
  const int64_t dilation = attrs.dilations ? (*attrs.dilations)[i] : 1;
  const int64_t pad_begin = attrs.pads ? (*attrs.pads)[i] : 0;
  const int64_t pad_end = attrs.pads ? (*attrs.pads)[spatial + i] : 0;
  if (in.is_known()) {
    ASSIGN_OR_RETURN(ConvAxis axis,
                     ConvOutputAxis(label, i, in.value(), *kernel, stride, dilation, pad_begin, pad_end,
                                    attrs.auto_pad));
    return Dim::Known(axis.output);
  }
  if (in.is_unknown() || stride != 1) return std::nullopt;
  if (attrs.auto_pad == ConvAutoPad::kSameUpper || attrs.auto_pad == ConvAutoPad::kSameLower) return in;
  const bool valid = attrs.auto_pad == ConvAutoPad::kValid;
  // in + pad_begin + pad_end - ((kernel - 1) * dilation + 1) + 1
  int64_t shift = 0;
  if (__builtin_mul_overflow(*kernel - 1, dilation, &shift)) return std::nullopt;
  shift = -shift;
  if (!valid && (__builtin_add_overflow(shift, pad_begin, &shift) || __builtin_add_overflow(shift, pad_end, &shift)))
    return std::nullopt;
  if (shift == 0) return in;
  Dim out = DimAdd(in, Dim::Known(shift));
  if (out.is_unknown()) return std::nullopt;
  return out;
}

// attune.FusedConv's X or Y channels last: [N, S..., C] for [N, C, S...].
bool ChannelsLast(const ShapeContext& ctx, const char* name) {
  return ctx.node().domain() == "attune" && ctx.attrs().GetInt(name, 0).value_or(0) == 1;
}

absl::Status ConvRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  std::optional<SymbolicShape> x = ctx.input(0).shape;
  if (!x) return absl::OkStatus();
  if (ChannelsLast(ctx, "channels_last_input") && x->size() >= 3) {
    const Dim c = x->back();
    x->pop_back();
    x->insert(x->begin() + 1, c);
  }
  const std::string label = ctx.node().Describe();
  ASSIGN_OR_RETURN(ConvAttributes attrs, ReadConvAttributes(label, ctx.attrs()));
  if (x->size() < 3)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input X ", SymbolicShapeToString(*x),
                                                   " must have rank 3 or more"));
  const int spatial = static_cast<int>(x->size()) - 2;
  const std::optional<SymbolicShape>& w = ctx.input(1).shape;
  if (w && w->size() != x->size())
    return absl::InvalidArgumentError(absl::StrCat(label, ": weights W ", SymbolicShapeToString(*w),
                                                   " must have X's rank ", x->size()));
  const std::pair<const std::optional<std::vector<int64_t>>*, const char*> lists[] = {
      {&attrs.kernel_shape, "kernel_shape"}, {&attrs.strides, "strides"}, {&attrs.dilations, "dilations"},
      {&attrs.pads, "pads"}};
  for (const auto& [list, name] : lists) {
    const int per_axis = list == &attrs.pads ? 2 : 1;
    if (*list && static_cast<int>((*list)->size()) != per_axis * spatial)
      return absl::InvalidArgumentError(absl::StrCat(label, ": attribute '", name, "' does not have ",
                                                     per_axis * spatial, " entries for X ",
                                                     SymbolicShapeToString(*x)));
  }
  // Channel counts that are numbers must agree.
  const Dim& c = (*x)[1];
  if (c.is_known() && c.value() % attrs.group != 0)
    return absl::InvalidArgumentError(absl::StrCat(label, ": ", c.value(), " channels are not divisible by group"));
  if (w && c.is_known() && (*w)[1].is_known() && (*w)[1].value() != c.value() / attrs.group)
    return absl::InvalidArgumentError(absl::StrCat(label, ": W's input channels do not match X's"));

  SymbolicShape shape{(*x)[0], w && !(*w)[0].is_unknown() ? (*w)[0] : ctx.FreshDim(0, 1)};
  for (int i = 0; i < spatial; ++i) {
    std::optional<int64_t> kernel;
    if (w && (*w)[2 + i].is_known()) kernel = (*w)[2 + i].value();
    if (attrs.kernel_shape) {
      if (kernel && *kernel != (*attrs.kernel_shape)[i])
        return absl::InvalidArgumentError(absl::StrCat(label, ": kernel_shape differs from W's kernel"));
      kernel = (*attrs.kernel_shape)[i];
    }
    ASSIGN_OR_RETURN(std::optional<Dim> dim, SpatialDim(label, attrs, i, spatial, (*x)[2 + i], kernel));
    shape.push_back(dim ? *dim : ctx.FreshDim(0, 2 + i));
  }
  if (ChannelsLast(ctx, "channels_last_output")) {
    const Dim c = shape[1];
    shape.erase(shape.begin() + 1);
    shape.push_back(c);
  }
  out.shape = std::move(shape);
  return absl::OkStatus();
}

}  // namespace

void AddConvRules(RuleTable& table) {
  table.Add("Conv", ConvRule);
  table.Add("FusedConv", ConvRule, "attune");
}

}  // namespace attune::shape_rules
