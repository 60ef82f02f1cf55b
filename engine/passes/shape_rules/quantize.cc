// Shape rules of the quantization ops: QuantizeLinear / DequantizeLinear keep
// x's shape and choose the output type; the integer products take MatMul's
// shape rule on their A and B.
#include "engine/passes/shape_rules/rules.h"

namespace attune::shape_rules {
namespace {

absl::Status QuantizeLinearRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  auto dtype = ctx.attrs().GetInt("output_dtype", 0);
  if (!dtype.ok()) return dtype.status();
  out.type = ctx.has_input(2)   ? ctx.input(2).type
             : *dtype != 0      ? static_cast<ElementType>(*dtype)
                                : ElementType::kUint8;
  out.shape = ctx.input(0).shape;
  return absl::OkStatus();
}

absl::Status DequantizeLinearRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  auto dtype = ctx.attrs().GetInt("output_dtype", 0);
  if (!dtype.ok()) return dtype.status();
  out.type = *dtype != 0 ? static_cast<ElementType>(*dtype) : ctx.input(1).type;
  out.shape = ctx.input(0).shape;
  return absl::OkStatus();
}

absl::Status DynamicQuantizeLinearRule(ShapeContext& ctx) {
  ctx.output(0).type = ElementType::kUint8;
  ctx.output(0).shape = ctx.input(0).shape;
  for (int o = 1; o < ctx.num_outputs(); ++o) {
    ctx.output(o).type = o == 1 ? ElementType::kFloat32 : ElementType::kUint8;
    ctx.output(o).shape = SymbolicShape{};
  }
  return absl::OkStatus();
}

// MatMul's rule on inputs a and b, with the output type `type`.
absl::Status ProductOf(ShapeContext& ctx, int a, int b, ElementType type) {
  ShapeContext product(ctx.node(), ctx.opset(), {&ctx.input(a), &ctx.input(b)});
  ShapeRule matmul = FindShapeRule("", "MatMul");
  if (matmul == nullptr) return absl::InternalError("no MatMul shape rule");
  const absl::Status status = matmul(product);
  ctx.output(0).shape = product.output(0).shape;
  ctx.output(0).type = type;
  return status;
}

absl::Status MatMulIntegerRule(ShapeContext& ctx) { return ProductOf(ctx, 0, 1, ElementType::kInt32); }
absl::Status QLinearMatMulRule(ShapeContext& ctx) { return ProductOf(ctx, 0, 3, ctx.input(7).type); }
absl::Status ProductToFloatRule(ShapeContext& ctx) { return ProductOf(ctx, 0, 1, ElementType::kFloat32); }

}  // namespace

void AddQuantizeRules(RuleTable& table) {
  table.Add("QuantizeLinear", QuantizeLinearRule);
  table.Add("DequantizeLinear", DequantizeLinearRule);
  table.Add("DynamicQuantizeLinear", DynamicQuantizeLinearRule);
  table.Add("MatMulInteger", MatMulIntegerRule);
  table.Add("QLinearMatMul", QLinearMatMulRule);
  table.Add("MatMulIntegerToFloat", ProductToFloatRule, "com.microsoft");
  table.Add("DynamicQuantizeMatMul", ProductToFloatRule, "com.microsoft");
  table.Add("DynamicQuantizeMatMul", ProductToFloatRule, "attune");
}

}  // namespace attune::shape_rules
