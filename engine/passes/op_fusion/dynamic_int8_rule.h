// Dynamic int8 products as ONNX Runtime's quantize_dynamic (and the tools
// built on it: Optimum's dynamic recipes, transformers.js model_quantized
// files) writes them, folded into one attune.DynamicQuantizeMatMul:
//   q, s, z = DynamicQuantizeLinear(a)
//   y = Cast(MatMulInteger(q, B, z, B_zero_point), to=float) · Mul(s, B_scale) (+ bias)
// with B, its zero point (one, or one per column), its scale (one, or one
// per column) and the bias row constants. The fused kernel quantizes a as
// DynamicQuantizeLinear does, runs the exact int32 product, and applies
// float(acc) · (s · B_scale) + bias with the subgraph's roundings, so it gives
// the subgraph's bits (ops/quantize/).
#pragma once

#include "engine/passes/op_fusion/op_rule.h"

namespace attune::op_fusion {

/// "dynamic_int8_product", anchored at the MatMulInteger.
OpRule DynamicInt8ProductRule();

}  // namespace attune::op_fusion
