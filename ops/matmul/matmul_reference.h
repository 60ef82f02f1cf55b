// Plain-loop matrix product for every element type MatMul and Gemm accept:
// the path for types oneDNN does not cover, and a fallback for float32.
#pragma once

#include "absl/status/status.h"
#include "attune/tensor.h"
#include "ops/matmul/matmul_shape.h"

namespace attune {

/// Whether ReferenceMatMul handles this element type.
bool ReferenceMatMulSupports(ElementType type);

/// c = a·b following `shape`; a, b and c share one element type and c is
/// already allocated with shape.output_shape. With trans_a (trans_b) A (B) is
/// stored with its last two dims swapped, i.e. as [batch..., K, M] ([batch..., N, K]).
/// Rows are split over `threads` OpenMP threads.
absl::Status ReferenceMatMul(const MatMulShape& shape, const Tensor& a, const Tensor& b, Tensor& c, int threads,
                             bool trans_a = false, bool trans_b = false);

}  // namespace attune
