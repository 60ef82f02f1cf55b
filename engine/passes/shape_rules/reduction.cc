// Shape rules of ops that reduce along axes: ReduceX, ArgMax/ArgMin and
// LayerNormalization (whose optional Mean/InvStdDev outputs are reduced).
#include "absl/strings/str_cat.h"
#include "engine/passes/shape_rules/rules.h"
#include "engine/passes/symbolic_dim.h"

namespace attune::shape_rules {
namespace {

absl::Status ReduceRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  const auto& in = ctx.input(0).shape;
  // ReduceSum took its axes as an input from opset 13, the others from 18.
  const int axes_input_since = ctx.node().op_type() == "ReduceSum" ? 13 : 18;
  auto axes = ctx.AxesFrom("axes", 1, axes_input_since);
  auto keep_dims = ctx.attrs().GetInt("keepdims", 1);
  auto noop_when_empty = ctx.attrs().GetInt("noop_with_empty_axes", 0);
  if (!keep_dims.ok() || !noop_when_empty.ok()) return absl::InvalidArgumentError("bad keepdims/noop_with_empty_axes");
  if (!in || !axes) return absl::OkStatus();
  const int64_t rank = static_cast<int64_t>(in->size());
  std::vector<bool> reduced(rank, axes->empty() && *noop_when_empty == 0);
  for (int64_t axis : *axes) {
    auto a = NormalizeAxis(axis, rank, ctx);
    if (!a.ok()) return a.status();
    reduced[*a] = true;
  }
  SymbolicShape shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i]) shape.push_back((*in)[i]);
    else if (*keep_dims) shape.push_back(Dim::Known(1));
  }
  out.shape = shape;
  return absl::OkStatus();
}

absl::Status ArgReduceRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ElementType::kInt64;
  const auto& in = ctx.input(0).shape;
  if (!in) return absl::OkStatus();
  auto axis_attr = ctx.attrs().GetInt("axis", 0);
  auto keep_dims = ctx.attrs().GetInt("keepdims", 1);
  if (!axis_attr.ok() || !keep_dims.ok()) return absl::InvalidArgumentError("bad axis/keepdims");
  auto axis = NormalizeAxis(*axis_attr, static_cast<int64_t>(in->size()), ctx);
  if (!axis.ok()) return axis.status();
  SymbolicShape shape = *in;
  if (*keep_dims) shape[*axis] = Dim::Known(1);
  else shape.erase(shape.begin() + *axis);
  out.shape = shape;
  return absl::OkStatus();
}

// NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss: the loss is a scalar,
// or the target's shape with reduction "none"; log_prob is the scores' shape.
absl::Status LossRule(ShapeContext& ctx) {
  auto reduction = ctx.attrs().GetString("reduction", "mean");
  if (!reduction.ok()) return reduction.status();
  ctx.output(0).type = ctx.input(0).type;
  if (*reduction == "none") ctx.output(0).shape = ctx.input(1).shape;
  else ctx.output(0).shape = SymbolicShape{};
  if (ctx.num_outputs() > 1) CopyFacts(ctx, 0, 1);
  return absl::OkStatus();
}

absl::Status LayerNormRule(ShapeContext& ctx) {
  CopyFacts(ctx, 0);
  const auto& in = ctx.input(0).shape;
  auto stash = ctx.attrs().GetInt("stash_type", 1);
  if (!stash.ok()) return stash.status();
  for (int o = 1; o < ctx.num_outputs() && o < 3; ++o) ctx.output(o).type = static_cast<ElementType>(*stash);
  if (!in) return absl::OkStatus();
  auto axis_attr = ctx.attrs().GetInt("axis", -1);
  if (!axis_attr.ok()) return axis_attr.status();
  auto axis = NormalizeAxis(*axis_attr, static_cast<int64_t>(in->size()), ctx);
  if (!axis.ok()) return axis.status();
  SymbolicShape stats = *in;
  for (size_t i = *axis; i < stats.size(); ++i) stats[i] = Dim::Known(1);
  for (int o = 1; o < ctx.num_outputs() && o < 3; ++o) ctx.output(o).shape = stats;
  return absl::OkStatus();
}

}  // namespace

void AddReductionRules(RuleTable& table) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    table.Add(op, ReduceRule);
  table.Add("ArgMax", ArgReduceRule);
  table.Add("NegativeLogLikelihoodLoss", LossRule);
  table.Add("SoftmaxCrossEntropyLoss", LossRule);
  table.Add("ArgMin", ArgReduceRule);
  table.Add("LayerNormalization", LayerNormRule);
  table.Add("RMSNormalization", LayerNormRule);  // Y only: X's type and shape
  for (const char* op : {"SkipLayerNormalization", "SkipRMSNormalization"})
    table.Add(op, [](ShapeContext& ctx) {  // Y and the sum: X's type and shape
      for (int o = 0; o < ctx.num_outputs() && o < 2; ++o) CopyFacts(ctx, 0, o);
      return absl::OkStatus();
    }, "attune");
}

}  // namespace attune::shape_rules
