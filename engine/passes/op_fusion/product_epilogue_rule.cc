#include "engine/passes/op_fusion/product_epilogue_rule.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace attune::op_fusion {
namespace {

using pattern::Any;
using pattern::Capture;
using pattern::Op;
using pattern::OneOf;
using pattern::Pattern;

constexpr char kProduct[] = "product";
constexpr char kReshape[] = "reshape";
constexpr char kMultiplier[] = "multiplier";
const std::vector<std::string> kActivations = {"Gelu", "Swish", "Relu"};

// A product whose result the epilogue may take, seen through a Reshape.
Pattern ProductResult() {
  const Pattern product = OneOf({Op(std::vector<std::string>{"Gemm", "MatMul"}).CaptureNode(kProduct).IgnoreExtraInputs(),
                                 Op("FusedMatMul").Domain("attune").CaptureNode(kProduct).IgnoreExtraInputs()});
  return OneOf({product, Op("Reshape").CaptureNode(kReshape).Inputs({product, Any()})});
}

Pattern Activation(const std::vector<std::string>& ops) {
  return Op(ops).CaptureNode(kAnchor).Inputs({ProductResult()});
}

Pattern SwiGluPattern() {
  return Op("Mul").Commutative().Inputs({Activation({"Swish"}), Capture(kMultiplier)});
}

// Attributes of the fused product: the product's own, and the activation's
// under activation_* names.
Attributes FusedAttributes(const Node& product, const Node& activation) {
  Attributes attrs = product.attributes();
  const std::string& op = activation.op_type();
  attrs.Set("activation", op);
  if (op == "Gelu")
    attrs.Set("activation_approximate", activation.attributes().GetString("approximate", "none").value_or("none"));
  if (op == "Swish") attrs.Set("activation_alpha", activation.attributes().GetFloat("alpha", 1.0f).value_or(1.0f));
  return attrs;
}

std::string Describe(const Attributes& attrs, bool multiplied) {
  std::string text = attrs.GetString("activation", "").value_or("");
  if (attrs.Has("activation_approximate"))
    absl::StrAppend(&text, "(approximate=", attrs.GetString("activation_approximate", "").value_or(""), ")");
  if (attrs.Has("activation_alpha"))
    absl::StrAppend(&text, "(alpha=", attrs.GetFloat("activation_alpha", 1.0f).value_or(1.0f), ")");
  if (multiplied) absl::StrAppend(&text, " x multiplier");
  return text;
}

std::optional<std::string> Check(const Graph&, const pattern::Match& m) {
  const Node& product = *m.node(kProduct);
  const Node& activation = *m.node(kAnchor);
  const Value& out = *product.output(0);
  if (out.type() != ElementType::kFloat32)
    return absl::StrCat(product.Describe(), " gives ", ElementTypeName(out.type()),
                        "; epilogues are folded into float32 products only");
  if (product.domain() == "attune" &&
      (product.attributes().Has("activation") || (product.num_inputs() > 2 && product.input(2) != nullptr)))
    return absl::StrCat(product.Describe(), " already has an epilogue");
  if (activation.op_type() == "Gelu") {
    const std::string approximate = activation.attributes().GetString("approximate", "none").value_or("?");
    if (approximate != "none" && approximate != "tanh")
      return absl::StrCat(activation.Describe(), ": approximate \"", approximate, "\" is neither none nor tanh");
  }
  if (activation.op_type() == "Swish" &&
      !std::isfinite(activation.attributes().GetFloat("alpha", 1.0f).value_or(NAN)))
    return absl::StrCat(activation.Describe(), ": alpha is not a finite float");
  if (const Value* multiplier = m.value(kMultiplier)) {
    if (multiplier->type() != ElementType::kFloat32)
      return absl::StrCat("the multiplier '", multiplier->name(), "' is ", ElementTypeName(multiplier->type()));
    // The product multiplies element by element, without broadcasting, so
    // the Mul must have been one of equal shapes, and of the product's shape.
    if (!multiplier->shape() || !out.shape() || *multiplier->shape() != *out.shape())
      return absl::StrCat("the multiplier '", multiplier->name(), "' ",
                          multiplier->shape() ? SymbolicShapeToString(*multiplier->shape()) : "(shape unknown)",
                          " is not of the product's shape ",
                          out.shape() ? SymbolicShapeToString(*out.shape()) : "(unknown)");
  }
  return std::nullopt;
}

OpRewrite Rewrite(const Graph&, const pattern::Match& m, const Value& root) {
  const Node& product = *m.node(kProduct);
  const Node& activation = *m.node(kAnchor);
  const Value* multiplier = m.value(kMultiplier);
  const bool gemm = product.op_type() == "Gemm";
  const std::string op = gemm ? "FusedGemm" : "FusedMatMul";
  OpRewrite rw;
  rw.type = root.type();
  std::vector<std::string> inputs;
  for (const Value* in : product.inputs()) inputs.push_back(in != nullptr ? in->name() : "");
  if (multiplier != nullptr) {
    inputs.resize(gemm ? 3 : 2);  // the multiplier follows Gemm's C, omitted or not
    inputs.push_back(multiplier->name());
  }
  const Value& out = *product.output(0);
  const std::string y = rw.plan.AddValue("y", out.name() + "/" + op, out.type(), out.shape());
  Attributes attrs = FusedAttributes(product, activation);
  rw.record.op = op;
  rw.record.attributes = Describe(attrs, multiplier != nullptr);
  rw.plan.nodes.push_back(PlannedNode{op, "attune", product.name() + "/" + op, std::move(inputs), {y}, std::move(attrs)});
  std::string result = y;
  if (const Node* reshape = m.node(kReshape)) {
    result = rw.plan.AddValue("reshaped", root.name() + "/reshaped", root.type(), root.shape());
    rw.plan.nodes.push_back(PlannedNode{"Reshape", "", reshape->name(), {y, reshape->input(1)->name()}, {result},
                                        reshape->attributes()});
  }
  rw.plan.replace.emplace_back(root.name(), result);
  return rw;
}

OpRule Rule(std::string name, std::vector<std::string> anchors, Pattern pattern, int min_depth) {
  OpRule rule;
  rule.name = std::move(name);
  rule.anchor_ops = std::move(anchors);
  rule.near = pattern;  // the pattern itself: any structural match is a candidate
  rule.min_depth = min_depth;
  rule.max_depth = min_depth;
  rule.pattern = std::move(pattern);
  rule.check = Check;
  rule.rewrite = Rewrite;
  return rule;
}

}  // namespace

OpRule SwiGluRule() { return Rule("swiglu", {"Swish"}, SwiGluPattern(), 1); }

OpRule ProductActivationRule() { return Rule("product_activation", kActivations, Activation(kActivations), 0); }

}  // namespace attune::op_fusion
