// Picks the routine for one planned matrix product: oneDNN for float32 and
// for float16 (widened to float32, rounded once at the end), the reference
// loop for every other type (and for shapes oneDNN cannot take).
#pragma once

#include "absl/status/status.h"
#include "attune/tensor.h"
#include "ops/matmul/matmul_shape.h"

namespace attune {

/// c = a·b as `shape` plans it; c is allocated with shape.output_shape and the
/// element type of a and b (the caller checked that they match).
absl::Status ComputeMatMul(const MatMulShape& shape, const Tensor& a, const Tensor& b, Tensor& c, int threads,
                           bool trans_a = false, bool trans_b = false);

}  // namespace attune
