// Export of the ops the op fusions write (Gelu, Swish, RMSNormalization) into
// a model whose opset predates them: as the standard ops they are defined by.
#pragma once

#include "absl/status/status.h"
#include "core/ir/graph.h"

namespace attune {

/// Rewrites every Gelu (ONNX opset 20), Swish (24) and RMSNormalization (23)
/// of `graph` (an export copy) whose op is newer than the graph's default
/// opset as the ops of its ONNX definition, which any runtime of that opset
/// runs: ½·x·(1 + erf(x/√2)) or its tanh form, x·Sigmoid(alpha·x), and
/// w · x / Sqrt(ReduceMean(x·x) + eps) (in float32 between Casts for float16).
/// The ops are kept where the opset has them. An RMSNormalization of another
/// axis than the last or another stash type stays as it is (the fusion
/// writes none).
absl::Status LowerFusedOpsForOnnx(Graph& graph);

}  // namespace attune
