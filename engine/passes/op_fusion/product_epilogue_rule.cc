#include "engine/passes/op_fusion/product_epilogue_rule.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "engine/passes/op_fusion/rule_checks.h"

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
constexpr char kBias[] = "bias";
const std::vector<std::string> kActivations = {"Gelu", "Swish", "Relu"};

Pattern Product() {
  return OneOf({Op(std::vector<std::string>{"Gemm", "MatMul"}).CaptureNode(kProduct).IgnoreExtraInputs(),
                Op("FusedMatMul").Domain("attune").CaptureNode(kProduct).IgnoreExtraInputs()});
}

// product + bias, as torch exports a Linear layer on a 3-D input.
Pattern BiasedProduct(const Pattern& bias) {
  return Op("Add").Commutative().CaptureNode(kAnchor).Inputs({Product(), Capture(kBias, bias)});
}

// A product whose result the epilogue may take: itself, plus a bias, or
// seen through a Reshape.
Pattern ProductResult() {
  return OneOf({Product(), Op("Add").Commutative().Inputs({Product(), Capture(kBias)}),
                Op("Reshape").CaptureNode(kReshape).Inputs({Product(), Any()})});
}

Pattern Activation(const std::vector<std::string>& ops) {
  return Op(ops).CaptureNode(kAnchor).Inputs({ProductResult()});
}

Pattern SwiGluPattern() {
  return Op("Mul").Commutative().Inputs({Activation({"Swish"}), Capture(kMultiplier)});
}

// The activation of a match, or nullptr (a bias alone).
const Node* ActivationOf(const pattern::Match& m) {
  const Node* anchor = m.node(kAnchor);
  return anchor->op_type() == "Add" ? nullptr : anchor;
}

// Attributes of the fused product: the product's own, and the activation's
// under activation_* names.
Attributes FusedAttributes(const Node& product, const Node* activation) {
  Attributes attrs = product.attributes();
  if (activation == nullptr) return attrs;
  const std::string& op = activation->op_type();
  attrs.Set("activation", op);
  if (op == "Gelu")
    attrs.Set("activation_approximate", activation->attributes().GetString("approximate", "none").value_or("none"));
  if (op == "Swish") attrs.Set("activation_alpha", activation->attributes().GetFloat("alpha", 1.0f).value_or(1.0f));
  return attrs;
}

std::string Describe(const Attributes& attrs, bool biased, bool multiplied) {
  std::string text = biased ? "bias" : "";
  if (attrs.Has("activation")) absl::StrAppend(&text, biased ? " + " : "", *attrs.GetString("activation"));
  if (attrs.Has("activation_approximate"))
    absl::StrAppend(&text, "(approximate=", attrs.GetString("activation_approximate", "").value_or(""), ")");
  if (attrs.Has("activation_alpha"))
    absl::StrAppend(&text, "(alpha=", attrs.GetFloat("activation_alpha", 1.0f).value_or(1.0f), ")");
  if (multiplied) absl::StrAppend(&text, " x multiplier");
  return text;
}

// Why `bias` is not one row added to every row of the product's output `out`.
std::optional<std::string> CheckBias(const Node& product, const Value& bias, const Value& out) {
  if (product.op_type() == "Gemm") return absl::StrCat(product.Describe(), " takes a bias as its C, not after it");
  if (bias.type() != ElementType::kFloat32)
    return absl::StrCat("the bias '", bias.name(), "' is ", ElementTypeName(bias.type()));
  bool row = bias.shape() && out.shape() && !out.shape()->empty() && !bias.shape()->empty() &&
             bias.shape()->size() <= out.shape()->size() && bias.shape()->back() == out.shape()->back();
  for (size_t i = 0; row && i + 1 < bias.shape()->size(); ++i) row = (*bias.shape())[i] == Dim::Known(1);
  if (!row)
    return absl::StrCat("the bias '", bias.name(), "' ", ShapeText(bias), " is not one row of the product's ",
                        ShapeText(out));
  return std::nullopt;
}

std::optional<std::string> Check(const Graph&, const pattern::Match& m) {
  const Node& product = *m.node(kProduct);
  const Node* activation = ActivationOf(m);
  const Value& out = *product.output(0);
  if (out.type() != ElementType::kFloat32)
    return absl::StrCat(product.Describe(), " gives ", ElementTypeName(out.type()),
                        "; epilogues are folded into float32 products only");
  // A bias folded before (its Add came first) takes an activation and a
  // multiplier still; a second bias, activation or multiplier it does not.
  if (product.domain() == "attune") {
    const bool has_bias = product.num_inputs() > 2 && product.input(2) != nullptr;
    const bool has_rest =
        product.attributes().Has("activation") || (product.num_inputs() > 3 && product.input(3) != nullptr);
    if (has_rest || (has_bias && (m.value(kBias) != nullptr || activation == nullptr)))
      return absl::StrCat(product.Describe(), " already has an epilogue");
  }
  if (activation != nullptr && activation->op_type() == "Gelu") {
    const std::string approximate = activation->attributes().GetString("approximate", "none").value_or("?");
    if (approximate != "none" && approximate != "tanh")
      return absl::StrCat(activation->Describe(), ": approximate \"", approximate, "\" is neither none nor tanh");
  }
  if (activation != nullptr && activation->op_type() == "Swish" &&
      !std::isfinite(activation->attributes().GetFloat("alpha", 1.0f).value_or(NAN)))
    return absl::StrCat(activation->Describe(), ": alpha is not a finite float");
  if (const Value* bias = m.value(kBias))
    if (auto why = CheckBias(product, *bias, out)) return why;
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
  const Value* multiplier = m.value(kMultiplier);
  const Value* bias = m.value(kBias);
  const bool gemm = product.op_type() == "Gemm";
  const std::string op = gemm ? "FusedGemm" : "FusedMatMul";
  OpRewrite rw;
  rw.type = root.type();
  std::vector<std::string> inputs;
  for (const Value* in : product.inputs()) inputs.push_back(in != nullptr ? in->name() : "");
  // Gemm: A, B, C, multiplier. MatMul: A, B, bias, multiplier.
  if (bias != nullptr) {
    inputs.resize(2);
    inputs.push_back(bias->name());
  }
  if (multiplier != nullptr) {
    inputs.resize(3);  // the multiplier follows C or the bias, omitted or not
    inputs.push_back(multiplier->name());
  }
  const Value& out = *product.output(0);
  const std::string y = rw.plan.AddValue("y", out.name() + "/" + op, out.type(), out.shape());
  Attributes attrs = FusedAttributes(product, ActivationOf(m));
  rw.record.op = op;
  const bool biased = bias != nullptr || (!gemm && product.num_inputs() > 2 && product.input(2) != nullptr);
  rw.record.attributes = Describe(attrs, biased, multiplier != nullptr);
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

OpRule ProductBiasRule() {
  OpRule rule = Rule("product_bias", {"Add"}, BiasedProduct(Any()), 0);
  // Candidates are products plus a constant; a residual Add of a product is no bias.
  rule.near = BiasedProduct(pattern::ConstantWhere("a constant", nullptr));
  return rule;
}

}  // namespace attune::op_fusion
