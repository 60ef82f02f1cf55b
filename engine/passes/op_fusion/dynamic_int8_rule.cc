#include "engine/passes/op_fusion/dynamic_int8_rule.h"

#include "absl/strings/str_cat.h"
#include "engine/passes/op_fusion/rule_checks.h"

namespace attune::op_fusion {
namespace {

using pattern::Capture;
using pattern::Op;
using pattern::OneOf;
using pattern::Pattern;

constexpr char kQuantize[] = "quantize";
constexpr char kScale[] = "scale";
constexpr char kBias[] = "bias";
constexpr char kBiasAdd[] = "bias_add";

Pattern Quantized(int output) {
  return Op("DynamicQuantizeLinear").CaptureNode(kQuantize).Output(output).Inputs({Capture("a")});
}

Pattern ScaledProduct() {
  const Pattern product = Op("MatMulInteger").CaptureNode(kAnchor).IgnoreExtraInputs().Inputs(
      {Quantized(0), Capture("b"), Quantized(2)});
  const Pattern scales = Op("Mul").Commutative().Inputs({Quantized(1), Capture(kScale)});
  return Op("Mul").Commutative().Inputs({Op("Cast").CaptureNode("cast").Inputs({product}), scales});
}

Pattern Near() { return Op("Cast").Inputs({Op("MatMulInteger")}); }

bool IsInt8(ElementType t) { return t == ElementType::kInt8 || t == ElementType::kUint8; }

// Why a constant operand of `n` columns is not one value or one per column.
std::optional<std::string> CheckPerColumn(const Value* v, const char* what, int64_t n, ElementType type) {
  if (v == nullptr || !v->is_constant()) return absl::StrCat(what, " is not a constant");
  const Tensor& t = *v->constant();
  if (t.type() != type)
    return absl::StrCat(what, " '", v->name(), "' has type ", ElementTypeName(t.type()), ", not ",
                        ElementTypeName(type));
  if (t.rank() > 1 || (t.num_elements() != 1 && t.num_elements() != n))
    return absl::StrCat(what, " '", v->name(), "' ", ShapeText(*v), " is not one value or ", n,
                        " (one per column) in at most one dim");
  return std::nullopt;
}

std::optional<std::string> Check(const Graph&, const pattern::Match& m) {
  const Node& product = *m.node(kAnchor);
  const Value* a = m.value("a");
  const Value* b = m.value("b");
  if (a->type() != ElementType::kFloat32) return absl::StrCat("the quantized input '", a->name(), "' is not float32");
  if (!b->is_constant() || !IsInt8(b->constant()->type()) || b->constant()->rank() != 2)
    return absl::StrCat("B '", b->name(), "' of ", product.Describe(), " is not a constant 2-D int8 or uint8 matrix");
  const int64_t n = b->constant()->shape()[1];
  const Node& cast = *m.node("cast");
  if (cast.attributes().GetInt("to", 0).value_or(0) != static_cast<int64_t>(ElementType::kFloat32))
    return absl::StrCat(cast.Describe(), " does not cast to float32");
  if (product.num_inputs() > 3 && product.input(3) != nullptr)
    if (auto why = CheckPerColumn(product.input(3), "B's zero point", n, b->constant()->type())) return why;
  if (auto why = CheckPerColumn(m.value(kScale), "B's scale", n, ElementType::kFloat32)) return why;
  if (m.has(kBias))
    if (auto why = CheckPerColumn(m.value(kBias), "the bias", n, ElementType::kFloat32)) return why;
  if (m.has(kBias) && m.value(kBias)->constant()->num_elements() != n)
    return absl::StrCat("the bias '", m.value(kBias)->name(), "' is not one value per column");
  return std::nullopt;
}

OpRewrite Rewrite(const Graph&, const pattern::Match& m, const Value& root) {
  const Node& product = *m.node(kAnchor);
  std::vector<std::string> inputs = {m.value("a")->name(), m.value("b")->name(), m.value(kScale)->name(),
                                     product.num_inputs() > 3 && product.input(3) != nullptr ? product.input(3)->name()
                                                                                              : ""};
  if (m.has(kBias)) inputs.push_back(m.value(kBias)->name());
  OpRewrite rw = SingleNodeRewrite(root, "DynamicQuantizeMatMul", std::move(inputs), Attributes());
  rw.plan.nodes.back().domain = "attune";
  rw.plan.nodes.back().name_hint = product.name() + "/DynamicQuantizeMatMul";
  const Tensor& b = *m.value("b")->constant();
  rw.record.attributes = absl::StrCat("weights=", ElementTypeName(b.type()), " k=", b.shape()[0], " n=", b.shape()[1],
                                      " scale=", m.value(kScale)->constant()->num_elements() == 1 ? "tensor" : "column",
                                      m.has(kBias) ? " bias" : "");
  return rw;
}

}  // namespace

OpRule DynamicInt8ProductRule() {
  OpRule rule;
  rule.name = "dynamic_int8_product";
  rule.anchor_ops = {"MatMulInteger"};
  rule.near = Near();
  rule.min_depth = 2;
  rule.max_depth = 3;
  rule.pattern = OneOf({Op("Add").Commutative().CaptureNode(kBiasAdd).Inputs({ScaledProduct(), Capture(kBias)}),
                        ScaledProduct()});
  rule.kept_nodes = {kQuantize};
  rule.check = Check;
  rule.rewrite = Rewrite;
  return rule;
}

}  // namespace attune::op_fusion
