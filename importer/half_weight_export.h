// Export of the half-size weight product back to standard ONNX ops.
#pragma once

#include "absl/status/status.h"
#include "core/ir/graph.h"

namespace attune {

/// Rewrites every attune.HalfWeightMatMul(a, W, bias) of `graph` (an export
/// copy) whose activations stay float32 (accuracy_level 0 or 1, or float16 W)
/// as MatMul(a, Cast(Wᵀ, to=float)) (+ Add(bias)), with Wᵀ the [K, N] copy
/// of W in its own 16-bit type: a weight file's form, which ONNX Runtime runs
/// and Attune loads back as the same product. Same outputs: the widening is
/// exact. Products at accuracy_level 3 (bfloat16 activations) stay attune.
absl::Status LowerHalfWeightProductsForOnnx(Graph& graph);

}  // namespace attune
