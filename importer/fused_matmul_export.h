// Export of attune.FusedMatMul and attune.FusedGemm as the standard ops they
// stand for.
#pragma once

#include "absl/status/status.h"
#include "core/ir/graph.h"

namespace attune {

/// Rewrites every attune.FusedMatMul(A, B, trans_b) of `graph` (an export copy)
/// as MatMul(A, Transpose(B)), and every attune.FusedGemm as Gemm, each
/// followed by its epilogue as the standard ops: Add of the bias, the
/// activation (Gelu, Swish or Relu, which the op fusions' export lowers
/// further where the opset has not got them) and Mul by the multiplier. The result means the same thing
/// in any ONNX runtime. A node whose B has an unknown rank stays as it is (no
/// perm can be written).
absl::Status LowerFusedMatMulForOnnx(Graph& graph);

}  // namespace attune
