// RMS normalisation written out op by op, as the ONNX RMSNormalization op
// (opset 23; axis -1, the chain's epsilon, stash_type float32):
//   w · (x / sqrt(mean(x², axis -1, keepdims) + eps))
// as torch exports LlamaRMSNorm and T5LayerNorm: x² as Pow(x, 2) or
// Mul(x, x); 1/sqrt as Reciprocal(Sqrt), Div(1, Sqrt) or Pow(·, -0.5), or
// x / Sqrt(·) directly; the weight on either side. A float16 model's
// Cast(x, float32) … Cast(·, float16) pair becomes the op's float32
// stash type; the weight must then be float16 like x.
//
// The kernel computes what the chain computes: x · (1/sqrt(mean + eps)) · w
// in float32, NaN for a row with a NaN, NaN at ±inf and 0 elsewhere in a
// row with an infinity (inf · 0, as the chain). It rounds once where a
// float16 chain rounds x · inv to float16 before the weight.
#pragma once

#include "engine/passes/op_fusion/op_rule.h"

namespace attune::op_fusion {

/// The rule "rms_norm" (anchored at ReduceMean).
OpRule RmsNormRule();

}  // namespace attune::op_fusion
