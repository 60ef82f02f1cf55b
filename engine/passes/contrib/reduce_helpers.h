// Reductions written by the lowerings, in the form the graph's opset reads
// (axes an attribute before ReduceSum-13 / ReduceMean-18, an input after).
#pragma once

#include "engine/passes/contrib/lowering_kit.h"

namespace attune::contrib {

/// op(x) over `axes` with keepdims.
Value* Reduce(Lowering& l, const char* op, Value* x, std::vector<int64_t> axes, bool keepdims);
/// 1 / sqrt(mean(x², last axis) + epsilon), keepdims: an RMS norm's inv_std_var.
Value* InverseRms(Lowering& l, Value* x, float epsilon);

}  // namespace attune::contrib
