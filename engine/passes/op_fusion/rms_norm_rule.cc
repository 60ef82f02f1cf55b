#include "engine/passes/op_fusion/rms_norm_rule.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "engine/passes/op_fusion/algebra_patterns.h"
#include "engine/passes/op_fusion/rule_checks.h"
#include "engine/pattern/constants.h"

namespace attune::op_fusion {
namespace {

using pattern::Any;
using pattern::Capture;
using pattern::Op;
using pattern::OneOf;
using pattern::Pattern;

constexpr char kCastBack[] = "cast_back";
// The longest weight of ones the rewrite makes for a norm without a weight.
constexpr int64_t kMaxOnesWeight = int64_t{1} << 24;

Pattern MeanOfSquares(const Pattern& x) {
  return Op("ReduceMean").CaptureNode(kAnchor).IgnoreExtraInputs().Inputs({Square(x)});
}

Pattern RmsNormPattern() {
  const Pattern xf = Capture("xf");
  const Pattern shifted = Op("Add").Commutative().Inputs({MeanOfSquares(xf), Capture("eps", AnyScalar("epsilon"))});
  const Pattern rms = Op("Sqrt").Inputs({shifted});
  const Pattern inverse = OneOf({Op("Reciprocal").Inputs({rms}), Op("Div").Inputs({Near("1", 1.0), rms}),
                                 Op("Pow").Inputs({shifted, Exactly(-0.5)})});
  const Pattern normed = OneOf({Op("Mul").Commutative().Inputs({xf, inverse}), Op("Div").Inputs({xf, rms})});
  const Pattern cast_back = Op("Cast").CaptureNode(kCastBack).Inputs({normed});
  // Without the weight (a norm without one, or one of ones that algebraic
  // simplification took away), the op gets a weight of ones.
  return OneOf({Op("Mul").Commutative().Inputs({Capture("w"), OneOf({normed, cast_back})}), normed, cast_back});
}

// mean(square) + a constant.
Pattern NearPattern() {
  const Pattern v = Capture("v");
  return Op("Add").Commutative().Inputs(
      {Op("ReduceMean").IgnoreExtraInputs().Inputs({OneOf({Op("Mul").Inputs({v, v}), Op("Pow").Inputs({v, Any()})})}),
       pattern::ConstantWhere("a constant", nullptr)});
}

// The tensor the fused op normalises: x itself, or with a cast back to a
// narrower type at the end, the input of the Cast that widened it.
const Value* FusedInput(const pattern::Match& m) {
  const Value* xf = m.value("xf");
  const Node* cast_back = m.node(kCastBack);
  if (cast_back == nullptr) return xf;
  const Node* widen = xf->producer();
  if (widen == nullptr || widen->op_type() != "Cast" || !widen->domain().empty()) return nullptr;
  return widen->input(0);
}

// A vector of n ones of a float type.
Tensor OnesOf(ElementType type, int64_t n) {
  Tensor t = *Tensor::Create(type, {n});
  for (int64_t i = 0; i < n; ++i) {
    switch (type) {
      case ElementType::kFloat16: t.data<Float16>()[i] = FloatToHalf(1.0f); break;
      default: t.data<float>()[i] = 1.0f; break;
    }
  }
  return t;
}

std::optional<std::string> CheckAxes(const Graph& graph, const Node& mean, const Value& xf) {
  if (mean.attributes().GetInt("keepdims", 1).value_or(1) != 1)
    return absl::StrCat(mean.Describe(), " drops the reduced axis (keepdims=0)");
  std::optional<std::vector<int64_t>> axes;
  if (const Value* in = mean.input(1)) {
    const Tensor* t = pattern::ConstantOf(in);
    if (t == nullptr) return absl::StrCat(mean.Describe(), ": axes are not a constant");
    axes = pattern::TensorAsInts(*t);
  } else if (mean.attributes().Has("axes")) {
    auto a = mean.attributes().GetInts("axes");
    if (a.ok()) axes = *a;
  }
  if (!axes) return absl::StrCat(mean.Describe(), " reduces every axis");
  if (axes->size() != 1) return absl::StrCat(mean.Describe(), " reduces ", axes->size(), " axes, not the last one");
  if ((*axes)[0] == -1) return std::nullopt;
  if (xf.shape() && (*axes)[0] == static_cast<int64_t>(xf.shape()->size()) - 1) return std::nullopt;
  return absl::StrCat(mean.Describe(), " reduces axis ", (*axes)[0], ", not the last one");
}

std::optional<std::string> Check(const Graph& graph, const pattern::Match& m) {
  const Value& xf = *m.value("xf");
  const Node& mean = *m.node(kAnchor);
  const Value* w = m.value("w");
  if (auto why = CheckFusedType(xf)) return why;
  if (auto why = CheckAxes(graph, mean, xf)) return why;
  if (auto why = CheckScalarOperands(m, xf, {w, mean.input(1)})) return why;
  const double epsilon = *pattern::UniformValue(*pattern::ConstantOf(m.value("eps")));
  if (!(epsilon >= 0)) return absl::StrCat("epsilon ", epsilon, " is negative");

  const Value* x = FusedInput(m);
  if (const Node* cast_back = m.node(kCastBack)) {
    if (x == nullptr)
      return absl::StrCat(cast_back->Describe(), " casts back, but '", xf.name(), "' is not a Cast of the input");
    if (xf.type() != ElementType::kFloat32)
      return absl::StrCat("the chain between the casts runs in ", ElementTypeName(xf.type()), ", not float32");
    const int64_t to = cast_back->attributes().GetInt("to", 0).value_or(0);
    if (x->type() != static_cast<ElementType>(to))
      return absl::StrCat(cast_back->Describe(), " casts to ", ElementTypeName(static_cast<ElementType>(to)),
                          ", not back to the input's ", ElementTypeName(x->type()));
    if (auto why = CheckFusedType(*x)) return why;
  }
  if (!x->shape() || x->shape()->empty())
    return absl::StrCat("the rank of '", x->name(), "' is unknown or 0");
  const Dim& features = x->shape()->back();
  if (w == nullptr) {
    if (!features.is_known() || features.value() < 1 || features.value() > kMaxOnesWeight)
      return absl::StrCat("no weight, and the normalised dim of '", x->name(), "' (", features.ToString(),
                          ") is not a size to make one of ones for");
    return std::nullopt;
  }
  if (w->type() != x->type())
    return absl::StrCat("weight '", w->name(), "' is ", ElementTypeName(w->type()), ", the input '", x->name(), "' ",
                        ElementTypeName(x->type()));
  if (!w->shape() || w->shape()->size() != 1)
    return absl::StrCat("weight '", w->name(), "' is not one vector along the normalised axis");
  if (!((*w->shape())[0] == features))
    return absl::StrCat("weight '", w->name(), "' has length ", (*w->shape())[0].ToString(),
                        ", not provably the last dim of '", x->name(), "' (", features.ToString(), ")");
  return std::nullopt;
}

}  // namespace

OpRule RmsNormRule() {
  OpRule rule;
  rule.name = "rms_norm";
  rule.anchor_ops = {"ReduceMean"};
  rule.near = NearPattern();
  rule.max_depth = 6;  // ReduceMean -> Add -> Sqrt -> Div -> Mul -> Cast -> Mul
  rule.pattern = RmsNormPattern();
  rule.check = Check;
  rule.rewrite = [](const Graph&, const pattern::Match& m, const Value& root) {
    const float epsilon = static_cast<float>(*pattern::UniformValue(*pattern::ConstantOf(m.value("eps"))));
    Attributes attrs;
    attrs.Set("axis", int64_t{-1});
    attrs.Set("epsilon", epsilon);
    attrs.Set("stash_type", static_cast<int64_t>(ElementType::kFloat32));
    const Value& x = *FusedInput(m);
    const Value* w = m.value("w");
    OpRewrite rw = SingleNodeRewrite(root, "RMSNormalization", {x.name(), w != nullptr ? w->name() : "$ones"},
                                     std::move(attrs));
    if (w == nullptr) {
      PlannedValue ones{"ones", x.name() + "/rms_norm_ones", x.type(), std::nullopt, std::nullopt};
      ones.constant = OnesOf(x.type(), x.shape()->back().value());
      rw.plan.values.push_back(std::move(ones));
    }
    rw.record.attributes = absl::StrCat("epsilon=", epsilon, w == nullptr ? ", no weight" : "");
    return rw;
  };
  return rule;
}

}  // namespace attune::op_fusion
