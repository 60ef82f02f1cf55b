#include "engine/passes/op_fusion/gelu_rule.h"

#include <cmath>
#include <numbers>

#include "engine/passes/op_fusion/algebra_patterns.h"
#include "engine/passes/op_fusion/rule_checks.h"

namespace attune::op_fusion {
namespace {

using pattern::Capture;
using pattern::Op;
using pattern::OneOf;
using pattern::Pattern;

enum class GeluForm { kTanh, kErf };

constexpr double kSqrt2OverPi = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // √(2/π)
constexpr double kCubic = 0.044715;
constexpr double kInvSqrt2 = 1.0 / std::numbers::sqrt2;

// The argument of tanh or erf, in x.
Pattern Argument(GeluForm form, const Pattern& x) {
  if (form == GeluForm::kErf) return Scaled(x, "1/sqrt(2)", kInvSqrt2);  // x·(1/√2) or x/√2
  return OneOf({
      // √(2/π)·(x + 0.044715·x³)
      Scaled(Op("Add").Commutative().Inputs({x, ScaledCube(x, "0.044715", kCubic)}), "sqrt(2/pi)", kSqrt2OverPi),
      // √(2/π)·x·(1 + 0.044715·x²), the product in any association
      ScaledProduct(x, Op("Add").Commutative().Inputs({ScaledSquare(x, "0.044715", kCubic), Near("1", 1.0)}),
                    "sqrt(2/pi)", kSqrt2OverPi),
  });
}

// ½·x·(1 + f(argument)), the product in any association.
Pattern GeluPattern(GeluForm form) {
  const Pattern x = Capture("x");
  const Pattern f = Op(form == GeluForm::kTanh ? "Tanh" : "Erf").CaptureNode(kAnchor).Inputs({Argument(form, x)});
  const Pattern bracket = Op("Add").Commutative().Inputs({f, Near("1", 1.0)});
  return ScaledProduct(x, bracket, "1/2", 0.5);
}

// f(·) + a constant: the bracket, whatever the constant is.
Pattern NearPattern(GeluForm form) {
  return Op("Add").Commutative().Inputs(
      {Op(form == GeluForm::kTanh ? "Tanh" : "Erf"), pattern::ConstantWhere("a constant", nullptr)});
}

std::optional<std::string> Check(const Graph&, const pattern::Match& m) {
  const Value& x = *m.value("x");
  if (auto why = CheckFusedType(x)) return why;
  if (auto why = CheckScalarOperands(m, x)) return why;
  return std::nullopt;
}

OpRule MakeRule(GeluForm form) {
  OpRule rule;
  rule.name = form == GeluForm::kTanh ? "gelu_tanh" : "gelu_erf";
  rule.anchor_ops = {form == GeluForm::kTanh ? "Tanh" : "Erf"};
  rule.near = NearPattern(form);
  rule.max_depth = 3;  // f -> Add -> Mul -> Mul (or Div)
  rule.pattern = GeluPattern(form);
  rule.check = Check;
  const std::string approximate = form == GeluForm::kTanh ? "tanh" : "none";
  rule.rewrite = [approximate](const Graph&, const pattern::Match& m, const Value& root) {
    Attributes attrs;
    attrs.Set("approximate", approximate);
    OpRewrite rw = SingleNodeRewrite(root, "Gelu", {m.value("x")->name()}, std::move(attrs));
    rw.record.attributes = "approximate=" + approximate;
    return rw;
  };
  return rule;
}

}  // namespace

std::vector<OpRule> GeluRules() { return {MakeRule(GeluForm::kTanh), MakeRule(GeluForm::kErf)}; }

}  // namespace attune::op_fusion
