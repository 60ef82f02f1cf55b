// Shape rules of numpy-style matrix products (ONNX MatMul): 1-D promotion,
// batch broadcasting, and the dimensions a matmul routine needs.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace attune {

/// C[batch..., M, N] = A[batch..., M, K] * B[batch..., K, N] with both operands
/// dense row-major. Batch dims are rank-aligned and merged where possible;
/// a_batch[i] and b_batch[i] are equal or one of them is 1 (broadcast), and
/// out_batch[i] is their maximum.
struct MatMulShape {
  std::vector<int64_t> output_shape;  // what numpy would return
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> a_batch, b_batch, out_batch;

  /// Number of 2-D products (1 when there is no batch).
  int64_t batch_count() const;
};

/// Plans A·B with numpy semantics. When B has no effective batch, A's batch is
/// folded into M (rows are contiguous), so out_batch is empty. Errors name
/// `op` and both shapes.
absl::StatusOr<MatMulShape> PlanMatMul(std::string_view op, std::span<const int64_t> a_shape,
                                       std::span<const int64_t> b_shape);

}  // namespace attune
