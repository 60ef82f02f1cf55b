// Shape rules of ops that cut or join tensors along an axis: Concat, Split,
// Slice, Gather, GatherElements. On tracked data (shape tensors) they also
// compute the elements, which is what makes Shape->Gather->Concat symbolic.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/passes/shape_rules/rules.h"
#include "engine/passes/symbolic_dim.h"

namespace attune::shape_rules {
namespace {

// Ends at or beyond this mean "to the end" (exporters write INT64_MAX or INT32_MAX).
constexpr int64_t kToEnd = int64_t{1} << 31;

// Every input of a Concat that succeeds has the same dim off the axis, so any
// of them may name the output's. The most telling is kept: a number, then an
// expression of other dims (BLOOM's merged keys, batch*heads, against the
// past's own 'batch_x_heads'), then a symbol, so that later rules can prove
// the result equal to the values it was computed from.
bool MoreTelling(const Dim& candidate, const Dim& current) {
  if (candidate.is_unknown() || current.is_known()) return false;
  if (candidate.is_known() || current.is_unknown()) return true;
  return current.expr()->single_atom() != nullptr && candidate.expr()->single_atom() == nullptr;
}

absl::Status ConcatRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  auto axis_attr = ctx.attrs().GetInt("axis");
  if (!axis_attr.ok()) return axis_attr.status();
  std::vector<const ValueFacts*> ins;
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) ins.push_back(&ctx.input(i));
  if (ins.empty()) return absl::OkStatus();
  for (const ValueFacts* in : ins)
    if (out.type == ElementType::kUndefined) out.type = in->type;
  int64_t rank = -1;
  for (const ValueFacts* in : ins) {
    if (!in->shape) continue;
    if (rank >= 0 && rank != in->rank())
      return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": inputs have ranks ", rank, " and ",
                                                     in->rank()));
    rank = in->rank();
  }
  if (rank < 0) return absl::OkStatus();
  auto axis = NormalizeAxis(*axis_attr, rank, ctx);
  if (!axis.ok()) return axis.status();
  SymbolicShape shape(rank, Dim());
  Dim total = Dim::Known(0);
  for (const ValueFacts* in : ins) {
    if (!in->shape) {
      total = Dim();
      continue;
    }
    for (int64_t d = 0; d < rank; ++d) {
      const Dim& dim = (*in->shape)[d];
      if (d == *axis) continue;
      if (MoreTelling(dim, shape[d])) shape[d] = dim;
    }
    total = DimAdd(total, (*in->shape)[*axis]);
  }
  shape[*axis] = total;
  out.shape = shape;
  if (rank == 1) {
    std::vector<Dim> data;
    for (const ValueFacts* in : ins) {
      if (!in->data) return absl::OkStatus();
      data.insert(data.end(), in->data->begin(), in->data->end());
    }
    out.data = data;
  }
  return absl::OkStatus();
}

absl::Status SplitRule(ShapeContext& ctx) {
  const auto& in = ctx.input(0).shape;
  for (int o = 0; o < ctx.num_outputs(); ++o) ctx.output(o).type = ctx.input(0).type;
  if (!in) return absl::OkStatus();
  const int64_t rank = static_cast<int64_t>(in->size());
  auto axis_attr = ctx.attrs().GetInt("axis", 0);
  if (!axis_attr.ok()) return axis_attr.status();
  auto axis = NormalizeAxis(*axis_attr, rank, ctx);
  if (!axis.ok()) return axis.status();
  const int n = ctx.num_outputs();
  std::vector<Dim> sizes;
  if (ctx.opset() < 13 && ctx.attrs().Has("split")) {
    auto split = ctx.attrs().GetInts("split");
    if (!split.ok()) return split.status();
    for (int64_t s : *split) sizes.push_back(Dim::Known(s));
  } else if (ctx.opset() >= 13 && ctx.has_input(1)) {
    auto split = ctx.InputData(1);
    if (!split) {
      sizes.assign(n, Dim());
    } else {
      sizes = *split;
    }
  } else {
    const Dim& d = (*in)[*axis];
    if (d.is_known()) {
      // Opset 18 allows an uneven split: every part but the last is ceil(d / n).
      const int64_t part = (d.value() + n - 1) / n;
      for (int o = 0; o < n; ++o) sizes.push_back(Dim::Known(std::max<int64_t>(0, std::min(part, d.value() - part * o))));
      if (ctx.opset() < 18 && d.value() % n != 0)
        return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": dim ", d.value(),
                                                       " does not split evenly into ", n));
    } else {
      const Dim part = DimDivExact(d, Dim::Known(n));
      sizes.assign(n, part);
    }
  }
  if (static_cast<int>(sizes.size()) != n)
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": ", sizes.size(), " split sizes for ", n,
                                                   " outputs"));
  for (int o = 0; o < n; ++o) {
    SymbolicShape shape = *in;
    shape[*axis] = sizes[o];
    ctx.output(o).shape = shape;
  }
  return absl::OkStatus();
}

struct SliceParams {
  std::vector<Dim> starts, ends;
  std::vector<int64_t> axes, steps;
};

std::optional<SliceParams> ReadSliceParams(const ShapeContext& ctx, int64_t rank) {
  SliceParams p;
  if (ctx.opset() < 10) {
    auto starts = ctx.attrs().GetInts("starts");
    auto ends = ctx.attrs().GetInts("ends");
    if (!starts.ok() || !ends.ok()) return std::nullopt;
    for (int64_t s : *starts) p.starts.push_back(Dim::Known(s));
    for (int64_t e : *ends) p.ends.push_back(Dim::Known(e));
    if (ctx.attrs().Has("axes")) {
      auto axes = ctx.attrs().GetInts("axes");
      if (!axes.ok()) return std::nullopt;
      p.axes = *axes;
    }
  } else {
    auto starts = ctx.InputData(1);
    auto ends = ctx.InputData(2);
    if (!starts || !ends) return std::nullopt;
    p.starts = *starts;
    p.ends = *ends;
    if (ctx.has_input(3)) {
      auto axes = ctx.InputInts(3);
      if (!axes) return std::nullopt;
      p.axes = *axes;
    }
    if (ctx.has_input(4)) {
      auto steps = ctx.InputInts(4);
      if (!steps) return std::nullopt;
      p.steps = *steps;
    }
  }
  const size_t n = p.starts.size();
  if (p.axes.empty())
    for (size_t i = 0; i < n; ++i) p.axes.push_back(static_cast<int64_t>(i));
  if (p.steps.empty()) p.steps.assign(n, 1);
  if (p.ends.size() != n || p.axes.size() != n || p.steps.size() != n) return std::nullopt;
  for (int64_t& a : p.axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    if (a < 0) a += rank;
  }
  return p;
}

// Known bounds: the ONNX clamping rules. Returns {start, length}.
std::pair<int64_t, int64_t> StaticSlice(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? (end - start + step - 1) / step : 0};
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return {start, start > end ? (start - end + (-step) - 1) / (-step) : 0};
}

// Symbolic bounds, step 1, with ONNX's clamping kept exact: the length is
// only named when it is provable for every dim value (x[-k:] on a symbolic
// dim is min(k, dim), mask[:T] of a 64-long buffer is min(T, 64)).
Dim SymbolicSliceLength(const Dim& dim, const Dim& start, const Dim& end) {
  auto non_negative = [](const Dim& d) {
    auto e = d.AsExpr();
    return e && e->IsNonNegative();
  };
  const bool to_end = end == dim || (end.is_known() && end.value() >= kToEnd);
  if (to_end) {
    if (start.is_known() && start.value() < 0) return DimMin(Dim::Known(-start.value()), dim);
    // x[-n:] with n a symbolic length (T5's position_bias[:, :, -seq:, :]): min(n, dim).
    if (!start.is_known()) {
      const Dim n = DimSub(Dim::Known(0), start);
      if (non_negative(n) && !non_negative(start)) return DimMin(n, dim);
    }
    if (!non_negative(start)) return Dim();
    // start <= dim is provable only when dim - start has no negative term.
    auto length = DimSub(dim, start).AsExpr();
    if (!length || !length->IsNonNegative()) return Dim();
    return Dim::FromExpr(*std::move(length));
  }
  if (start.is_known() && start.value() == 0 && non_negative(end)) return DimMin(end, dim);
  return Dim();
}

absl::Status SliceRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  const auto& in = ctx.input(0).shape;
  if (!in) return absl::OkStatus();
  const int64_t rank = static_cast<int64_t>(in->size());
  auto params = ReadSliceParams(ctx, rank);
  if (!params) {
    // Only the rank is known.
    SymbolicShape shape(rank, Dim());
    out.shape = shape;
    return absl::OkStatus();
  }
  SymbolicShape shape = *in;
  // Per axis {start, step} when the slice is static there (for slicing data).
  std::vector<std::optional<std::pair<int64_t, int64_t>>> ranges(rank, std::pair<int64_t, int64_t>{0, 1});
  for (size_t i = 0; i < params->axes.size(); ++i) {
    const int64_t axis = params->axes[i];
    const int64_t step = params->steps[i];
    if (step == 0) return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": step 0"));
    const Dim& d = (*in)[axis];
    const Dim& s = params->starts[i];
    const Dim& e = params->ends[i];
    if (d.is_known() && s.is_known() && e.is_known()) {
      auto [start, length] = StaticSlice(d.value(), s.value(), e.value(), step);
      shape[axis] = Dim::Known(length);
      ranges[axis] = std::pair<int64_t, int64_t>{start, step};
      continue;
    }
    ranges[axis].reset();
    Dim length = step == 1 ? SymbolicSliceLength(d, s, e) : Dim();
    shape[axis] = length.is_unknown() ? ctx.FreshDim(0, static_cast<int>(axis)) : length;
  }
  out.shape = shape;
  if (rank == 1 && ctx.input(0).data && ranges[0] && shape[0].is_known()) {
    const auto [start, step] = *ranges[0];
    const auto& values = *ctx.input(0).data;
    std::vector<Dim> data;
    for (int64_t k = 0; k < shape[0].value(); ++k) {
      const int64_t idx = start + k * step;
      if (idx < 0 || idx >= static_cast<int64_t>(values.size())) return absl::OkStatus();
      data.push_back(values[idx]);
    }
    out.data = data;
  }
  return absl::OkStatus();
}

absl::Status GatherRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  const auto& data_shape = ctx.input(0).shape;
  const auto& indices_shape = ctx.input(1).shape;
  if (!data_shape || !indices_shape) return absl::OkStatus();
  const int64_t rank = static_cast<int64_t>(data_shape->size());
  auto axis_attr = ctx.attrs().GetInt("axis", 0);
  if (!axis_attr.ok()) return axis_attr.status();
  auto axis = NormalizeAxis(*axis_attr, rank, ctx);
  if (!axis.ok()) return axis.status();
  SymbolicShape shape(data_shape->begin(), data_shape->begin() + *axis);
  shape.insert(shape.end(), indices_shape->begin(), indices_shape->end());
  shape.insert(shape.end(), data_shape->begin() + *axis + 1, data_shape->end());
  out.shape = shape;
  auto indices = ctx.InputInts(1);
  if (rank == 1 && ctx.input(0).data && indices) {
    const int64_t n = static_cast<int64_t>(ctx.input(0).data->size());
    std::vector<Dim> data;
    for (int64_t idx : *indices) {
      if (idx < -n || idx >= n)
        return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": index ", idx, " out of range for ", n));
      data.push_back((*ctx.input(0).data)[idx < 0 ? idx + n : idx]);
    }
    out.data = data;
  }
  return absl::OkStatus();
}

absl::Status GatherElementsRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  ctx.output(0).shape = ctx.input(1).shape;
  return absl::OkStatus();
}

}  // namespace

void AddSlicingRules(RuleTable& table) {
  table.Add("Concat", ConcatRule);
  table.Add("Split", SplitRule);
  table.Add("Slice", SliceRule);
  table.Add("Gather", GatherRule);
  table.Add("GatherElements", GatherElementsRule);
}

}  // namespace attune::shape_rules
