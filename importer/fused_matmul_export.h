// Export of attune.FusedMatMul as the standard ops it stands for.
#pragma once

#include "absl/status/status.h"
#include "core/ir/graph.h"

namespace attune {

/// Rewrites every attune.FusedMatMul(A, B, trans_b) of `graph` (an export copy)
/// as MatMul(A, Transpose(B)), which means the same thing in any ONNX runtime.
/// A node whose B has an unknown rank stays as it is (no perm can be written).
absl::Status LowerFusedMatMulForOnnx(Graph& graph);

}  // namespace attune
