#include "engine/passes/op_fusion/conv_epilogue_rule.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/passes/op_fusion/rule_checks.h"

namespace attune::op_fusion {
namespace {

using pattern::Capture;
using pattern::Op;
using pattern::OneOf;
using pattern::Pattern;

constexpr char kConv[] = "conv";
constexpr char kResidual[] = "residual";
const std::vector<std::string> kActivations = {"Relu", "Clip", "LeakyRelu", "HardSwish", "Sigmoid", "Tanh"};

Pattern Convolution() {
  return OneOf({Op("Conv").CaptureNode(kConv).IgnoreExtraInputs(),
                Op("FusedConv").Domain("attune").CaptureNode(kConv).IgnoreExtraInputs()});
}

Pattern ResidualPattern() {
  return Op("Add").Commutative().CaptureNode(kAnchor).Inputs({Convolution(), Capture(kResidual)});
}

Pattern ActivationPattern() {
  return Op(kActivations).CaptureNode(kAnchor).Inputs({Convolution()}).IgnoreExtraInputs();
}

// Why the convolution cannot take an epilogue: not float32, or a FusedConv
// that has one already (or its activation, before an Add).
std::optional<std::string> CheckConvolution(const Node& conv) {
  const Value& y = *conv.output(0);
  if (y.type() != ElementType::kFloat32 || conv.input(0) == nullptr ||
      conv.input(0)->type() != ElementType::kFloat32)
    return absl::StrCat(conv.Describe(), " is not float32; its epilogues are fused in float32 only");
  if (conv.domain() == "attune" && conv.attributes().Has("activation"))
    return absl::StrCat(conv.Describe(), " already has an activation");
  return std::nullopt;
}

std::optional<std::string> CheckResidual(const Graph&, const pattern::Match& m) {
  const Node& conv = *m.node(kConv);
  if (auto why = CheckConvolution(conv)) return why;
  if (conv.domain() == "attune" && conv.num_inputs() > 3 && conv.input(3) != nullptr)
    return absl::StrCat(conv.Describe(), " already adds a residual");
  const Value& z = *m.value(kResidual);
  const Value& y = *conv.output(0);
  if (z.type() != ElementType::kFloat32) return absl::StrCat("the residual '", z.name(), "' is not float32");
  // The fused sum does not broadcast: Z must be Y's shape, known dim by dim.
  bool same = z.shape() && y.shape() && *z.shape() == *y.shape();
  for (size_t i = 0; same && i < y.shape()->size(); ++i) same = !(*y.shape())[i].is_unknown();
  if (!same)
    return absl::StrCat("the residual '", z.name(), "' ", ShapeText(z), " is not of the Conv output's shape ",
                        ShapeText(y));
  return std::nullopt;
}

// A Clip bound: input `index` (opset 11 on) or attribute `name` (before), as a float.
std::optional<float> ClipBound(const Node& clip, int index, const char* name, float absent) {
  if (clip.num_inputs() > index && clip.input(index) != nullptr) {
    const Tensor* t = clip.input(index)->constant();
    if (t == nullptr || t->type() != ElementType::kFloat32 || t->num_elements() != 1) return std::nullopt;
    return t->data<float>()[0];
  }
  return clip.attributes().GetFloat(name, absent).value_or(absent);
}

std::optional<std::string> CheckActivation(const Graph&, const pattern::Match& m) {
  const Node& conv = *m.node(kConv);
  if (auto why = CheckConvolution(conv)) return why;
  const Node& act = *m.node(kAnchor);
  if (act.op_type() == "Clip") {
    const auto low = ClipBound(act, 1, "min", std::numeric_limits<float>::lowest());
    const auto high = ClipBound(act, 2, "max", std::numeric_limits<float>::max());
    if (!low || !high) return absl::StrCat(act.Describe(), ": its bounds are not float32 constants of one element");
    if (std::isnan(*low) || std::isnan(*high)) return absl::StrCat(act.Describe(), ": a bound is NaN");
  }
  if (act.op_type() == "LeakyRelu" && !std::isfinite(act.attributes().GetFloat("alpha", 0.01f).value_or(NAN)))
    return absl::StrCat(act.Describe(), ": alpha is not a finite float");
  return std::nullopt;
}

// The convolution's inputs (X, W, B, Z; "" for one omitted) and attributes,
// the residual `z` taking the place of Z when given.
OpRewrite FusedRewrite(const pattern::Match& m, const Value& root, const Value* z, const Node* activation) {
  const Node& conv = *m.node(kConv);
  std::vector<std::string> inputs(4);
  for (int i = 0; i < conv.num_inputs() && i < 4; ++i)
    if (conv.input(i) != nullptr) inputs[i] = conv.input(i)->name();
  if (z != nullptr) inputs[3] = z->name();
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  Attributes attrs = conv.attributes();
  std::string described = inputs.size() > 3 ? "residual" : "";
  if (activation != nullptr) {
    const std::string& op = activation->op_type();
    attrs.Set("activation", op);
    if (op == "Clip") {
      attrs.Set("activation_alpha", *ClipBound(*activation, 1, "min", std::numeric_limits<float>::lowest()));
      attrs.Set("activation_beta", *ClipBound(*activation, 2, "max", std::numeric_limits<float>::max()));
    }
    if (op == "LeakyRelu") attrs.Set("activation_alpha", activation->attributes().GetFloat("alpha", 0.01f).value_or(0.01f));
    absl::StrAppend(&described, described.empty() ? "" : " + ", op);
  }
  OpRewrite rw = SingleNodeRewrite(root, "FusedConv", std::move(inputs), std::move(attrs));
  rw.plan.nodes.back().domain = "attune";
  rw.record.attributes = std::move(described);
  return rw;
}

OpRule Rule(std::string name, std::vector<std::string> anchors, Pattern pattern,
            std::function<std::optional<std::string>(const Graph&, const pattern::Match&)> check,
            std::function<OpRewrite(const Graph&, const pattern::Match&, const Value&)> rewrite) {
  OpRule rule;
  rule.name = std::move(name);
  rule.anchor_ops = std::move(anchors);
  rule.near = pattern;  // any structural match is a candidate
  rule.min_depth = 0;
  rule.max_depth = 0;
  rule.pattern = std::move(pattern);
  rule.check = std::move(check);
  rule.rewrite = std::move(rewrite);
  return rule;
}

}  // namespace

OpRule ConvResidualRule() {
  return Rule("conv_residual", {"Add"}, ResidualPattern(), CheckResidual,
              [](const Graph&, const pattern::Match& m, const Value& root) {
                return FusedRewrite(m, root, m.value(kResidual), nullptr);
              });
}

OpRule ConvActivationRule() {
  return Rule("conv_activation", kActivations, ActivationPattern(), CheckActivation,
              [](const Graph&, const pattern::Match& m, const Value& root) {
                return FusedRewrite(m, root, nullptr, m.node(kAnchor));
              });
}

}  // namespace attune::op_fusion
