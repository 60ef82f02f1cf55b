// A bias, an activation of a matrix product, and SwiGLU's product of that
// with another tensor, folded into the product as its epilogue
// (ops/matmul/product_epilogue.h):
//   MatMul(a, b) + bias                -> attune.FusedMatMul(a, b, bias)
//   act(MatMul(a, b) (+ bias))         -> attune.FusedMatMul(a, b (, bias)) with `activation`
//   act(Reshape(Gemm(a, b, c), shape)) -> Reshape(attune.FusedGemm(a, b, c), shape)
//   Swish(MatMul(x, W_gate)) · up      -> attune.FusedMatMul(x, W_gate, "", up), activation Swish
// The bias is one row of the output's last dim (torch exports a Linear layer
// on a 3-D input as MatMul and Add); a Gemm's bias is its C.
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
/// "product_bias": a product plus a bias row, anchored at the Add; after the
/// two above, which take a bias under an activation themselves.
OpRule ProductBiasRule();

}  // namespace attune::op_fusion
