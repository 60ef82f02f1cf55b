// An activation of a matrix product, and SwiGLU's product of that with
// another tensor, folded into the product as its epilogue
// (ops/matmul/product_epilogue.h):
//   act(MatMul(a, b))                  -> attune.FusedMatMul(a, b) with `activation`
//   act(Reshape(Gemm(a, b, c), shape)) -> Reshape(attune.FusedGemm(a, b, c), shape)
//   Swish(MatMul(x, W_gate)) · up      -> attune.FusedMatMul(x, W_gate, up), activation Swish
// act is Gelu (either approximation), Swish or Relu, as the op fusions and
// exporters write them; a Reshape between product and activation changes no
// element (Hugging Face's Conv1D reshapes addmm's 2-D result back to 3-D).
// Rules run after the transposed-B lowering, so a product may be an
// attune.FusedMatMul reading B in place. The epilogue rounds each element as
// the standalone ops do (it runs their kernels), so the fused product gives
// the subgraph's bits, NaN and ±inf included.
#pragma once

#include "engine/passes/op_fusion/op_rule.h"

namespace attune::op_fusion {

/// "swiglu": Mul(Swish(product), multiplier), anchored at the Swish.
OpRule SwiGluRule();
/// "product_activation": Gelu, Swish or Relu of a product, anchored at the activation.
OpRule ProductActivationRule();

}  // namespace attune::op_fusion
