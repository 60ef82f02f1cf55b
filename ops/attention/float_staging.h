// Float32 staging for the 16-bit float types: the attention kernels compute on
// float views, so float16 / bfloat16 tensors are widened on the way in and
// narrowed on the way out. Float32 tensors pass through without a copy.
#pragma once

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "ops/kernel.h"

namespace attune::attention {

/// True for float32, float16 and bfloat16.
bool IsStageableFloat(ElementType type);

/// `t` itself when it is float32, else a float32 copy (a scratch tensor within
/// the session's size limit). `t` must be a stageable float type.
absl::StatusOr<Tensor> StageAsFloat32(const KernelContext& ctx, const Tensor& t);

/// Writes `dst.num_elements()` floats from `src` into `dst`, rounding to its
/// (stageable) element type.
void StoreFromFloat32(const float* src, Tensor& dst);

}  // namespace attune::attention
