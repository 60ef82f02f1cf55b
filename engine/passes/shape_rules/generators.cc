// Shape rules of ops whose output shape comes from data rather than from an
// input's shape: Shape, Size, Constant, ConstantOfShape, Range, NonZero, EyeLike.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "engine/passes/shape_rules/rules.h"
#include "engine/passes/symbolic_dim.h"

namespace attune::shape_rules {
namespace {

absl::Status ShapeRule_(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ElementType::kInt64;
  const auto& in = ctx.input(0).shape;
  if (!in) return absl::OkStatus();
  const int64_t rank = static_cast<int64_t>(in->size());
  int64_t start = 0, end = rank;
  if (ctx.opset() >= 15) {
    auto s = ctx.attrs().GetInt("start", 0);
    auto e = ctx.attrs().GetInt("end", rank);
    if (!s.ok() || !e.ok()) return absl::InvalidArgumentError("bad start/end");
    start = std::clamp<int64_t>(*s < 0 ? *s + rank : *s, 0, rank);
    end = std::clamp<int64_t>(*e < 0 ? *e + rank : *e, 0, rank);
  }
  const int64_t length = std::max<int64_t>(0, end - start);
  out.shape = SymbolicShape{Dim::Known(length)};
  out.data = std::vector<Dim>(in->begin() + start, in->begin() + start + length);
  return absl::OkStatus();
}

absl::Status SizeRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ElementType::kInt64;
  out.shape = SymbolicShape{};
  if (ctx.input(0).shape) out.data = std::vector<Dim>{DimProduct(*ctx.input(0).shape)};
  return absl::OkStatus();
}

absl::Status ConstantRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  const Attributes& a = ctx.attrs();
  if (a.Has("value")) {
    auto t = a.GetTensor("value");
    if (!t.ok()) return t.status();
    ValueFacts f = FactsOfConstant(*t);
    f.constant = nullptr;  // the tensor is a temporary copy
    out = f;
  } else if (a.Has("value_int")) {
    out.type = ElementType::kInt64;
    out.shape = SymbolicShape{};
    out.data = std::vector<Dim>{Dim::Known(*a.GetInt("value_int"))};
  } else if (a.Has("value_ints")) {
    auto v = a.GetInts("value_ints");
    if (!v.ok()) return v.status();
    out.type = ElementType::kInt64;
    out.shape = SymbolicShape{Dim::Known(static_cast<int64_t>(v->size()))};
    std::vector<Dim> data;
    for (int64_t x : *v) data.push_back(Dim::Known(x));
    out.data = data;
  } else if (a.Has("value_float")) {
    out.type = ElementType::kFloat32;
    out.shape = SymbolicShape{};
  } else if (a.Has("value_floats")) {
    auto v = a.GetFloats("value_floats");
    if (!v.ok()) return v.status();
    out.type = ElementType::kFloat32;
    out.shape = SymbolicShape{Dim::Known(static_cast<int64_t>(v->size()))};
  }
  return absl::OkStatus();
}

absl::Status ConstantOfShapeRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ElementType::kFloat32;
  std::optional<Tensor> value;
  if (ctx.attrs().Has("value")) {
    auto t = ctx.attrs().GetTensor("value");
    if (!t.ok()) return t.status();
    if (t->num_elements() != 1)
      return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": value must have one element"));
    out.type = t->type();
    value = *t;
  }
  auto dims = ctx.InputData(0);
  const auto& in_shape = ctx.input(0).shape;
  if (dims) {
    out.shape = SymbolicShape(*dims);
  } else if (in_shape && in_shape->size() == 1 && (*in_shape)[0].is_known()) {
    out.shape = UnknownDims((*in_shape)[0].value());
  }
  if (value && MayTrackData(out.type, out.shape)) {
    const ValueFacts f = FactsOfConstant(*value);
    if (f.data) out.data = std::vector<Dim>(StaticElementCount(out.shape), (*f.data)[0]);
  }
  return absl::OkStatus();
}

std::optional<double> ScalarNumber(const ValueFacts& f) {
  if (f.data && f.data->size() == 1 && (*f.data)[0].is_known()) return static_cast<double>((*f.data)[0].value());
  if (f.constant == nullptr || f.constant->num_elements() != 1) return std::nullopt;
  switch (f.constant->type()) {
    case ElementType::kFloat32: return *f.constant->data<float>();
    case ElementType::kFloat64: return *f.constant->data<double>();
    case ElementType::kInt32: return *f.constant->data<int32_t>();
    case ElementType::kInt64: return static_cast<double>(*f.constant->data<int64_t>());
    default: return std::nullopt;
  }
}

absl::Status RangeRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  auto start = ScalarNumber(ctx.input(0));
  auto limit = ScalarNumber(ctx.input(1));
  auto delta = ScalarNumber(ctx.input(2));
  if (start && limit && delta) {
    if (*delta == 0) return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": delta is 0"));
    const double n = std::ceil((*limit - *start) / *delta);
    out.shape = SymbolicShape{Dim::Known(n > 0 ? static_cast<int64_t>(n) : 0)};
    return absl::OkStatus();
  }
  // range(start, limit) with step 1 has limit - start elements when that is provably >= 0.
  auto s = ctx.InputData(0);
  auto l = ctx.InputData(1);
  // A float range up to a cast integer: arange(float(n)) has n elements from
  // an integral start with step 1. (Exact while n is below 2^24, the float32
  // integers: a sequence that long has long exhausted memory elsewhere.)
  if (!s && start && *start == std::floor(*start) && std::fabs(*start) < (1 << 24))
    s = std::vector<Dim>{Dim::Known(static_cast<int64_t>(*start))};
  if (!l && ctx.input(1).integer_before_cast) l = std::vector<Dim>{*ctx.input(1).integer_before_cast};
  if (delta && *delta == 1 && s && l && s->size() == 1 && l->size() == 1) {
    auto length = DimSub((*l)[0], (*s)[0]).AsExpr();
    if (length && length->IsNonNegative()) {
      out.shape = SymbolicShape{Dim::FromExpr(*std::move(length))};
      return absl::OkStatus();
    }
  }
  out.shape = SymbolicShape{ctx.FreshDim(0, 0)};
  return absl::OkStatus();
}

absl::Status NonZeroRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ElementType::kInt64;
  if (ctx.input(0).shape)
    out.shape = SymbolicShape{Dim::Known(static_cast<int64_t>(ctx.input(0).shape->size())), ctx.FreshDim(0, 1)};
  return absl::OkStatus();
}

absl::Status EyeLikeRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.shape = ctx.input(0).shape;
  out.type = ctx.input(0).type;
  if (ctx.attrs().Has("dtype")) out.type = static_cast<ElementType>(*ctx.attrs().GetInt("dtype"));
  return absl::OkStatus();
}

}  // namespace

void AddGeneratorRules(RuleTable& table) {
  table.Add("Shape", ShapeRule_);
  table.Add("Size", SizeRule);
  table.Add("Constant", ConstantRule);
  table.Add("ConstantOfShape", ConstantOfShapeRule);
  table.Add("Range", RangeRule);
  table.Add("NonZero", NonZeroRule);
  table.Add("EyeLike", EyeLikeRule);
}

}  // namespace attune::shape_rules
