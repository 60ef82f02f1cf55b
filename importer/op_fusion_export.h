// Export of the ops the op fusions write: attune.SkipLayerNormalization and
// SkipRMSNormalization as the Add and the norm they are, attune.ElementwiseChain
// as its steps, and Gelu, Swish and
// RMSNormalization, in a model whose opset predates them, as the standard ops
// they are defined by.
#pragma once

#include "absl/status/status.h"
#include "core/ir/graph.h"

namespace attune {

/// Rewrites every attune.Skip*Normalization(x, skip, scale(, bias)) -> (y,
/// sum) of `graph` (an export copy) as sum = Add(x, skip), y = the norm of
/// sum, and every attune.ElementwiseChain as its steps' ops; then every Gelu
/// (ONNX opset 20), Swish (24) and RMSNormalization (23)
/// of `graph` (an export copy) whose op is newer than the graph's default
/// opset as the ops of its ONNX definition, which any runtime of that opset
/// runs: ½·x·(1 + erf(x/√2)) or its tanh form, x·Sigmoid(alpha·x), and
/// w · x / Sqrt(ReduceMean(x·x) + eps) (in float32 between Casts for float16).
/// The ops are kept where the opset has them. An RMSNormalization of another
/// axis than the last or another stash type stays as it is (the fusion
/// writes none). Last, the attune domain's import goes when no attune op is left.
absl::Status LowerFusedOpsForOnnx(Graph& graph);

}  // namespace attune
