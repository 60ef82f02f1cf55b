#include "engine/passes/op_fusion/swish_rule.h"

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

constexpr char kAlpha[] = "alpha";
constexpr char kDivisor[] = "divisor";
// QuickGELU's constant, for the report's name of the match.
constexpr double kQuickGelu = 1.702;

// x·Sigmoid(arg): the product either way round.
Pattern TimesSigmoid(const Pattern& x, const Pattern& arg) {
  return Op("Mul").Commutative().Inputs({x, Op("Sigmoid").CaptureNode(kAnchor).Inputs({arg})});
}

Pattern SwishPattern() {
  const Pattern x = Capture("x");
  return TimesSigmoid(x, OneOf({x, Op("Mul").Commutative().Inputs({x, Capture(kAlpha, AnyScalar("alpha"))}),
                                Op("Div").Inputs({x, Capture(kDivisor, AnyScalar("1/alpha"))})}));
}

// x·Sigmoid(x·anything): a gate of x by itself, whatever scales it.
Pattern NearPattern() {
  const Pattern x = Capture("x");
  return TimesSigmoid(x, OneOf({x, Op("Mul").Commutative().Inputs({x, Any()}), Op("Div").Inputs({x, Any()})}));
}

double ScalarOf(const Value* v) { return *pattern::UniformValue(*pattern::ConstantOf(v)); }

// alpha as the fused op's float attribute.
float Alpha(const pattern::Match& m) {
  if (const Value* a = m.value(kAlpha)) return static_cast<float>(ScalarOf(a));
  if (const Value* d = m.value(kDivisor)) return static_cast<float>(1.0 / ScalarOf(d));
  return 1.0f;
}

std::optional<std::string> Check(const Graph&, const pattern::Match& m) {
  const Value& x = *m.value("x");
  if (auto why = CheckFusedType(x)) return why;
  if (auto why = CheckScalarOperands(m, x)) return why;
  if (!std::isfinite(Alpha(m))) return absl::StrCat("alpha ", Alpha(m), " is not a finite float");
  return std::nullopt;
}

}  // namespace

OpRule SwishRule() {
  OpRule rule;
  rule.name = "swish";
  rule.anchor_ops = {"Sigmoid"};
  rule.near = NearPattern();
  rule.max_depth = 1;
  rule.pattern = SwishPattern();
  rule.check = Check;
  rule.rewrite = [](const Graph&, const pattern::Match& m, const Value& root) {
    const float alpha = Alpha(m);
    Attributes attrs;
    attrs.Set("alpha", alpha);
    OpRewrite rw = SingleNodeRewrite(root, "Swish", {m.value("x")->name()}, std::move(attrs));
    const char* kind = alpha == 1.0f                                          ? "silu"
                       : StandsFor(alpha, kQuickGelu, m.value("x")->type()) ? "quick_gelu"
                                                                            : "";
    rw.record.attributes = absl::StrCat("alpha=", alpha, *kind ? absl::StrCat(" (", kind, ")") : "");
    return rw;
  };
  return rule;
}

}  // namespace attune::op_fusion
