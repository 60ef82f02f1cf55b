// GELU written out op by op, in its two forms, as the ONNX Gelu op
// (opset 20's meaning):
//   erf:  ½·x·(1 + erf(x/√2))                   approximate = "none"
//   tanh: ½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))  approximate = "tanh"
// with the tanh argument also as √(2/π)·x·(1 + 0.044715·x²) (FastGELU).
// Constants are checked by value, products in any association and operand
// order, Mul or Div by a constant, x³ as Pow or Mul: HF gelu_new and
// NewGELUActivation, BERT's gelu, torch's nn.GELU() and
// nn.GELU(approximate='tanh') as torch.onnx writes them, FastGELU.
//
// What the fused op gives where the subgraph rounds differently: Gelu is
// the more accurate of the two (it has no cancellation in 1 + tanh or
// 1 + erf for negative x), and it gives NaN, +inf and -inf where the
// subgraph does: NaN for NaN and -inf, +inf for +inf. One difference: where
// the subgraph multiplies x by the bracket before halving (torch's nn.GELU
// export), x·(1 + t) overflows to +inf for x above half the type's largest
// value (1.7e38 in float32, 32752 in float16), where Gelu returns x. The
// tests pin that difference down.
#pragma once

#include <vector>

#include "engine/passes/op_fusion/op_rule.h"

namespace attune::op_fusion {

/// The two rules: "gelu_tanh" (anchored at Tanh) and "gelu_erf" (at Erf).
std::vector<OpRule> GeluRules();

}  // namespace attune::op_fusion
