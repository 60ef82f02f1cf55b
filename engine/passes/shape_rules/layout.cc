// Shape rules of ops that rearrange dims: Transpose, Reshape, Flatten,
// Squeeze, Unsqueeze, Expand, Tile.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/passes/shape_rules/rules.h"
#include "engine/passes/symbolic_dim.h"

namespace attune::shape_rules {
namespace {

absl::Status TransposeRule(ShapeContext& ctx) {
  CopyFacts(ctx, 0);
  const auto& in = ctx.input(0).shape;
  if (!in) return absl::OkStatus();
  const int64_t rank = static_cast<int64_t>(in->size());
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
  if (ctx.attrs().Has("perm")) {
    auto p = ctx.attrs().GetInts("perm");
    if (!p.ok()) return p.status();
    perm = *p;
  }
  if (static_cast<int64_t>(perm.size()) != rank)
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": perm has ", perm.size(),
                                                   " entries for rank ", rank));
  SymbolicShape out;
  std::vector<bool> used(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || used[p])
      return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": perm is not a permutation"));
    used[p] = true;
    out.push_back((*in)[p]);
  }
  ctx.output(0).shape = out;
  return absl::OkStatus();
}

// Resolves a Reshape target (one Dim per output dim; -1 and 0 with ONNX
// meaning) against the input shape.
absl::Status ReshapeRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  const auto& target_shape = ctx.input(1).shape;
  if (!target_shape || target_shape->size() != 1 || !(*target_shape)[0].is_known()) return absl::OkStatus();
  const int64_t out_rank = (*target_shape)[0].value();
  auto allow_zero = ctx.attrs().GetInt("allowzero", 0);
  if (!allow_zero.ok()) return allow_zero.status();
  auto target = ctx.InputData(1);
  if (!target) {
    out.shape = UnknownDims(out_rank);
    return absl::OkStatus();
  }
  if (static_cast<int64_t>(target->size()) != out_rank) return absl::OkStatus();
  const auto& in = ctx.input(0).shape;
  SymbolicShape shape;
  int infer_at = -1;
  for (int64_t i = 0; i < out_rank; ++i) {
    const Dim& t = (*target)[i];
    if (t.is_known() && t.value() == -1) {
      if (infer_at >= 0)
        return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": more than one -1 in the target"));
      infer_at = static_cast<int>(i);
      shape.push_back(Dim());
    } else if (t.is_known() && t.value() == 0 && *allow_zero == 0) {
      shape.push_back(in && i < static_cast<int64_t>(in->size()) ? (*in)[i] : Dim());
    } else if (t.is_known() && t.value() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": target dim ", t.value()));
    } else {
      shape.push_back(t);
    }
  }
  if (infer_at >= 0) {
    std::vector<Dim> others;
    for (int64_t i = 0; i < out_rank; ++i)
      if (i != infer_at) others.push_back(shape[i]);
    const Dim total = in ? DimProduct(*in) : Dim();
    const Dim known = DimProduct(others);
    Dim solved = DimDivExact(total, known);
    if (solved.is_unknown() && total.is_known() && known.is_known() && known.value() != 0) {
      if (total.value() % known.value() != 0)
        return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": cannot reshape ",
                                                       total.value(), " elements with -1 and ", known.value()));
      solved = Dim::Known(total.value() / known.value());
    }
    shape[infer_at] = solved.is_unknown() ? ctx.FreshDim(0, infer_at) : solved;
  }
  out.shape = shape;
  if (ctx.input(0).data) out.data = ctx.input(0).data;
  return absl::OkStatus();
}

absl::Status FlattenRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  const auto& in = ctx.input(0).shape;
  if (!in) return absl::OkStatus();
  const int64_t rank = static_cast<int64_t>(in->size());
  auto axis = ctx.attrs().GetInt("axis", 1);
  if (!axis.ok()) return axis.status();
  int64_t a = *axis < 0 ? *axis + rank : *axis;
  if (a < 0 || a > rank)
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": axis ", *axis, " for rank ", rank));
  out.shape = SymbolicShape{DimProduct(SymbolicShape(in->begin(), in->begin() + a)),
                            DimProduct(SymbolicShape(in->begin() + a, in->end()))};
  if (ctx.input(0).data) out.data = ctx.input(0).data;
  return absl::OkStatus();
}

absl::Status SqueezeRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  const auto& in = ctx.input(0).shape;
  auto axes = ctx.AxesFrom("axes", 1, 13);
  if (!in || !axes) return absl::OkStatus();
  const int64_t rank = static_cast<int64_t>(in->size());
  std::vector<bool> drop(rank, false);
  if (axes->empty()) {
    for (int64_t i = 0; i < rank; ++i) {
      if (!(*in)[i].is_known()) return absl::OkStatus();  // might be 1 at run time
      drop[i] = (*in)[i].value() == 1;
    }
  }
  for (int64_t axis : *axes) {
    auto a = NormalizeAxis(axis, rank, ctx);
    if (!a.ok()) return a.status();
    const Dim& d = (*in)[*a];
    if (d.is_known() && d.value() != 1)
      return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": cannot squeeze dim ", *a, " of size ",
                                                     d.value()));
    drop[*a] = true;
  }
  SymbolicShape shape;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i]) shape.push_back((*in)[i]);
  out.shape = shape;
  out.data = ctx.input(0).data;
  return absl::OkStatus();
}

absl::Status UnsqueezeRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  const auto& in = ctx.input(0).shape;
  auto axes = ctx.AxesFrom("axes", 1, 13);
  if (!in || !axes) return absl::OkStatus();
  const int64_t out_rank = static_cast<int64_t>(in->size() + axes->size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t axis : *axes) {
    auto a = NormalizeAxis(axis, out_rank, ctx);
    if (!a.ok()) return a.status();
    if (inserted[*a])
      return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": axis ", axis, " repeated"));
    inserted[*a] = true;
  }
  SymbolicShape shape;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) shape.push_back(inserted[i] ? Dim::Known(1) : (*in)[next++]);
  out.shape = shape;
  out.data = ctx.input(0).data;
  return absl::OkStatus();
}

absl::Status ExpandRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  const auto& in = ctx.input(0).shape;
  const auto& target_shape = ctx.input(1).shape;
  if (!in || !target_shape || target_shape->size() != 1 || !(*target_shape)[0].is_known()) return absl::OkStatus();
  auto target = ctx.InputData(1);
  std::optional<SymbolicShape> target_dims = target ? SymbolicShape(*target) : UnknownDims((*target_shape)[0].value());
  if (!target_dims) return absl::OkStatus();
  auto shape = BroadcastShapes({*in, *target_dims}, ctx);
  if (!shape.ok()) return shape.status();
  out.shape = *shape;
  if (ctx.input(0).data && MayTrackData(out.type, out.shape))
    out.data = BroadcastData(*out.shape, {&ctx.input(0)}, [](const std::vector<Dim>& v) { return v[0]; });
  return absl::OkStatus();
}

absl::Status TileRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  const auto& in = ctx.input(0).shape;
  auto repeats = ctx.InputData(1);
  if (!in) return absl::OkStatus();
  if (!repeats) {
    out.shape = SymbolicShape(in->size(), Dim());
    return absl::OkStatus();
  }
  if (repeats->size() != in->size())
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": repeats has ", repeats->size(),
                                                   " entries for rank ", in->size()));
  SymbolicShape shape;
  for (size_t i = 0; i < in->size(); ++i) shape.push_back(DimMul((*in)[i], (*repeats)[i]));
  out.shape = shape;
  return absl::OkStatus();
}

}  // namespace

void AddLayoutRules(RuleTable& table) {
  table.Add("Transpose", TransposeRule);
  table.Add("Reshape", ReshapeRule);
  table.Add("Flatten", FlattenRule);
  table.Add("Squeeze", SqueezeRule);
  table.Add("Unsqueeze", UnsqueezeRule);
  table.Add("Expand", ExpandRule);
  table.Add("Tile", TileRule);
}

}  // namespace attune::shape_rules
