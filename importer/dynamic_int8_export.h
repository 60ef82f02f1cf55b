// Export of the fused dynamic-int8 product back to the ops it replaced.
#pragma once

#include "absl/status/status.h"
#include "core/ir/graph.h"

namespace attune {

/// Rewrites every attune.DynamicQuantizeMatMul(a, b, b_scale, b_zero_point,
/// bias) of `graph` (an export copy) as quantize_dynamic writes it:
/// DynamicQuantizeLinear(a), MatMulInteger, Cast to float, Mul of the two
/// scales, Mul, and Add of the bias when there is one. Same outputs, bit for bit.
absl::Status LowerDynamicInt8ProductsForOnnx(Graph& graph);

}  // namespace attune
