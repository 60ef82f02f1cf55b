// Shape rules of the CNN ops: the windowed and global pools, ConvTranspose,
// the channel norms, LpNormalization, DepthToSpace and SpaceToDepth. A
// spatial dim is computed as the kernels compute it (ops/pool/pool_params.h,
// ops/conv/conv_transpose_params.h) when X's dim is a number, else it gets a
// fresh symbol.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/shape_rules/rules.h"
#include "ops/conv/conv_transpose_params.h"
#include "ops/pool/pool_params.h"
#include "ops/resize/resize_params.h"

namespace attune::shape_rules {
namespace {

absl::Status WindowPoolRule(ShapeContext& ctx) {
  const std::string label = ctx.node().Describe();
  ASSIGN_OR_RETURN(PoolAttributes attrs,
                   ReadPoolAttributes(label, ctx.node().op_type(), ctx.opset(), ctx.attrs()));
  const std::optional<SymbolicShape>& x = ctx.input(0).shape;
  for (int o = 0; o < ctx.num_outputs(); ++o) ctx.output(o).type = o == 0 ? ctx.input(0).type : ElementType::kInt64;
  if (!x) return absl::OkStatus();
  const ConvAttributes& w = attrs.window;
  const size_t spatial = w.kernel_shape->size();
  if (x->size() != spatial + 2)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input X ", SymbolicShapeToString(*x), " must have rank ",
                                                   spatial + 2, " for kernel_shape's ", spatial, " axes"));
  SymbolicShape shape{(*x)[0], (*x)[1]};
  for (size_t i = 0; i < spatial; ++i) {
    const Dim& in = (*x)[2 + i];
    if (!in.is_known()) {
      shape.push_back(ctx.FreshDim(0, static_cast<int>(2 + i)));
      continue;
    }
    ASSIGN_OR_RETURN(ConvAxis a, PoolOutputAxis(label, static_cast<int>(i), in.value(), (*w.kernel_shape)[i],
                                                w.strides ? (*w.strides)[i] : 1, w.dilations ? (*w.dilations)[i] : 1,
                                                w.pads ? (*w.pads)[i] : 0, w.pads ? (*w.pads)[spatial + i] : 0,
                                                w.auto_pad, attrs.ceil_mode));
    shape.push_back(Dim::Known(a.output));
  }
  for (int o = 0; o < ctx.num_outputs(); ++o) ctx.output(o).shape = shape;
  return absl::OkStatus();
}

absl::Status GlobalPoolRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  const std::optional<SymbolicShape>& x = ctx.input(0).shape;
  if (!x) return absl::OkStatus();
  if (x->size() < 2)
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": input X ", SymbolicShapeToString(*x),
                                                   " must have rank 2 or more"));
  SymbolicShape shape(x->size(), Dim::Known(1));
  shape[0] = (*x)[0];
  shape[1] = (*x)[1];
  ctx.output(0).shape = std::move(shape);
  return absl::OkStatus();
}

absl::Status ConvTransposeRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  const std::optional<SymbolicShape>& x = ctx.input(0).shape;
  const std::optional<SymbolicShape>& w = ctx.input(1).shape;
  if (!x || !w) return absl::OkStatus();
  const std::string label = ctx.node().Describe();
  ASSIGN_OR_RETURN(ConvTransposeAttributes attrs, ReadConvTransposeAttributes(label, ctx.attrs()));
  if (x->size() < 3 || w->size() != x->size())
    return absl::InvalidArgumentError(absl::StrCat(label, ": input X ", SymbolicShapeToString(*x), " and weights W ",
                                                   SymbolicShapeToString(*w), " must have one rank of 3 or more"));
  const int spatial = static_cast<int>(x->size()) - 2;
  SymbolicShape shape{(*x)[0], (*w)[1].is_known() ? Dim::Known((*w)[1].value() * attrs.conv.group) : ctx.FreshDim(0, 1)};
  for (int i = 0; i < spatial; ++i) {
    const Dim& in = (*x)[2 + i];
    const Dim& k = (*w)[2 + i];
    if (!in.is_known() || !k.is_known()) {
      shape.push_back(ctx.FreshDim(0, 2 + i));
      continue;
    }
    ASSIGN_OR_RETURN(ConvAxis a, ConvTransposeOutputAxis(label, i, attrs, spatial, in.value(), k.value()));
    shape.push_back(Dim::Known(a.output));
  }
  ctx.output(0).shape = std::move(shape);
  return absl::OkStatus();
}

absl::Status SameShapeRule(ShapeContext& ctx) {
  CopyFacts(ctx, 0);
  return absl::OkStatus();
}

absl::Status DepthSpaceRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  const std::optional<SymbolicShape>& x = ctx.input(0).shape;
  if (!x) return absl::OkStatus();
  const std::string label = ctx.node().Describe();
  if (x->size() != 4)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input ", SymbolicShapeToString(*x), " must be 4-D"));
  ASSIGN_OR_RETURN(int64_t b, ctx.attrs().GetInt("blocksize"));
  if (b < 1) return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'blocksize' must be positive"));
  const bool to_space = ctx.node().op_type() == "DepthToSpace";
  SymbolicShape shape{(*x)[0]};
  for (int i = 1; i < 4; ++i) {
    const Dim& d = (*x)[i];
    if (!d.is_known()) {
      shape.push_back(ctx.FreshDim(0, i));
      continue;
    }
    const int64_t v = d.value();
    const bool shrink = (i == 1) == to_space;  // DepthToSpace divides C, SpaceToDepth H and W
    const int64_t f = i == 1 ? b * b : b;
    if (shrink && v % f != 0)
      return absl::InvalidArgumentError(absl::StrCat(label, ": input ", SymbolicShapeToString(*x), " dim ", i,
                                                     " is not divisible by ", f));
    shape.push_back(Dim::Known(shrink ? v / f : v * f));
  }
  ctx.output(0).shape = std::move(shape);
  return absl::OkStatus();
}

// Resize and Upsample: the output shape when X's shape and the scales or
// sizes are known (constants), else X's rank with the resized axes unknown.
absl::Status ResizeRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  const std::optional<SymbolicShape>& x = ctx.input(0).shape;
  if (!x) return absl::OkStatus();
  const std::string label = ctx.node().Describe();
  const bool upsample = ctx.node().op_type() == "Upsample";
  ASSIGN_OR_RETURN(ResizeAttributes attrs, ReadResizeAttributes(label, ctx.opset(), upsample, ctx.attrs()));
  const bool two_inputs = upsample || ctx.opset() < 11;
  const int scales_at = two_inputs ? 1 : 2;
  std::vector<int64_t> dims;
  for (const Dim& d : *x)
    if (d.is_known()) dims.push_back(d.value());
  auto constant = [&](int i) { return ctx.has_input(i) ? ctx.input(i).constant : nullptr; };
  const bool scales_known = (upsample && !attrs.upsample_scales.empty()) || constant(scales_at) != nullptr;
  const bool inputs_known = !ctx.has_input(scales_at) || scales_known;
  const bool sizes_known = two_inputs || !ctx.has_input(3) || constant(3) != nullptr;
  if (dims.size() == x->size() && inputs_known && sizes_known) {
    ASSIGN_OR_RETURN(ResizePlan plan, PlanResize(label, attrs, dims, two_inputs ? nullptr : constant(1),
                                                 constant(scales_at), two_inputs ? nullptr : constant(3)));
    SymbolicShape shape;
    for (int64_t d : plan.output) shape.push_back(Dim::Known(d));
    ctx.output(0).shape = std::move(shape);
    return absl::OkStatus();
  }
  SymbolicShape shape;
  for (size_t i = 0; i < x->size(); ++i) shape.push_back(ctx.FreshDim(0, static_cast<int>(i)));
  ctx.output(0).shape = std::move(shape);
  return absl::OkStatus();
}

// Pad: X's rank; a dim grows by its pads when they are known.
absl::Status PadRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  const std::optional<SymbolicShape>& x = ctx.input(0).shape;
  if (!x) return absl::OkStatus();
  const int64_t rank = static_cast<int64_t>(x->size());
  std::optional<std::vector<int64_t>> pads;
  if (ctx.opset() < 11) {
    ASSIGN_OR_RETURN(std::vector<int64_t> p, ctx.attrs().GetInts(ctx.opset() < 2 ? "paddings" : "pads"));
    pads = std::move(p);
  } else {
    pads = ctx.InputInts(1);
  }
  std::vector<int64_t> axes;
  if (ctx.opset() >= 18 && ctx.has_input(3)) {
    std::optional<std::vector<int64_t>> a = ctx.InputInts(3);
    if (!a) pads.reset();
    else axes = *a;
  }
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  SymbolicShape shape;
  for (int64_t i = 0; i < rank; ++i) shape.push_back(ctx.FreshDim(0, static_cast<int>(i)));
  if (pads && pads->size() == 2 * axes.size()) {
    shape = *x;
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
      if (a < 0 || a >= rank)
        return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": axes has ", axes[k]));
      const int64_t grow = (*pads)[k] + (*pads)[axes.size() + k];
      if (grow == 0) continue;
      shape[a] = (*x)[a].is_known() ? Dim::Known((*x)[a].value() + grow) : ctx.FreshDim(0, static_cast<int>(a));
    }
  } else if (pads) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": pads has ", pads->size(),
                                                   " entries; input data ", SymbolicShapeToString(*x), " needs ",
                                                   2 * axes.size()));
  }
  ctx.output(0).shape = std::move(shape);
  return absl::OkStatus();
}

// GridSample: [N, C] of X and the grid's spatial dims.
absl::Status GridSampleRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  const std::optional<SymbolicShape>& x = ctx.input(0).shape;
  const std::optional<SymbolicShape>& grid = ctx.input(1).shape;
  if (!x || !grid || x->size() < 3 || grid->size() != x->size()) return absl::OkStatus();
  SymbolicShape shape{(*x)[0], (*x)[1]};
  shape.insert(shape.end(), grid->begin() + 1, grid->end() - 1);
  ctx.output(0).shape = std::move(shape);
  return absl::OkStatus();
}

// AffineGrid: size [N, C, spatial...] -> [N, spatial..., rank of spatial].
absl::Status AffineGridRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  std::optional<std::vector<Dim>> size = ctx.InputData(1);
  if (!size || (size->size() != 4 && size->size() != 5)) return absl::OkStatus();
  SymbolicShape shape{(*size)[0]};
  shape.insert(shape.end(), size->begin() + 2, size->end());
  shape.push_back(Dim::Known(static_cast<int64_t>(size->size()) - 2));
  ctx.output(0).shape = std::move(shape);
  return absl::OkStatus();
}

// Col2Im: input [N, C * prod(block_shape), L] and image_shape -> [N, C, image_shape...].
absl::Status Col2ImRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  const std::optional<SymbolicShape>& x = ctx.input(0).shape;
  std::optional<std::vector<Dim>> image = ctx.InputData(1);
  std::optional<std::vector<int64_t>> block = ctx.InputInts(2);
  if (!x || x->size() != 3 || !image) return absl::OkStatus();
  int64_t block_size = 1;
  for (int64_t b : block.value_or(std::vector<int64_t>{})) block_size *= b > 0 ? b : 1;
  const Dim& c = (*x)[1];
  SymbolicShape shape{(*x)[0], block && c.is_known() ? Dim::Known(c.value() / block_size) : ctx.FreshDim(0, 1)};
  shape.insert(shape.end(), image->begin(), image->end());
  ctx.output(0).shape = std::move(shape);
  return absl::OkStatus();
}

}  // namespace

void AddCnnRules(RuleTable& table) {
  for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) table.Add(op, WindowPoolRule);
  for (const char* op : {"GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"}) table.Add(op, GlobalPoolRule);
  table.Add("ConvTranspose", ConvTransposeRule);
  for (const char* op : {"BatchNormalization", "InstanceNormalization", "GroupNormalization", "LpNormalization", "LRN"})
    table.Add(op, SameShapeRule);
  table.Add("DepthToSpace", DepthSpaceRule);
  table.Add("SpaceToDepth", DepthSpaceRule);
  table.Add("Resize", ResizeRule);
  table.Add("Upsample", ResizeRule);
  table.Add("Pad", PadRule);
  table.Add("GridSample", GridSampleRule);
  table.Add("AffineGrid", AffineGridRule);
  table.Add("Col2Im", Col2ImRule);
}

}  // namespace attune::shape_rules
