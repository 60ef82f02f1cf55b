// x·sigmoid(alpha·x) as the ONNX Swish op (opset 24; attribute alpha):
// SiLU (alpha 1, x·Sigmoid(x), the gate of SwiGLU), QuickGELU
// (x·sigmoid(1.702·x)) and any other constant alpha, written Mul either way
// round or Div by 1/alpha. Swish is defined by the same Mul, Sigmoid and
// Mul, and its kernel rounds each as those ops do: the fused op gives the
// subgraph's bits (for Div(x, d), alpha is 1/d rounded, so the sigmoid's
// argument may differ from x/d in its last bit).
#pragma once

#include "engine/passes/op_fusion/op_rule.h"

namespace attune::op_fusion {

/// The rule "swish" (anchored at Sigmoid).
OpRule SwishRule();

}  // namespace attune::op_fusion
