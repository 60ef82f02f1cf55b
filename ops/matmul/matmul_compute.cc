#include "ops/matmul/matmul_compute.h"

#include "ops/matmul/matmul_reference.h"
#include "ops/matmul/onednn_matmul.h"

namespace attune {

absl::Status ComputeMatMul(const MatMulShape& shape, const Tensor& a, const Tensor& b, Tensor& c, int threads,
                           bool trans_a, bool trans_b) {
  if (a.type() == ElementType::kFloat32 && OneDnnMatMulSupportsBatchRank(shape.out_batch.size()) &&
      (!trans_a || shape.out_batch.empty())) {
    return OneDnnMatMul(shape, a.data<float>(), b.data<float>(), c.data<float>(), threads, trans_a, trans_b);
  }
  return ReferenceMatMul(shape, a, b, c, threads, trans_a, trans_b);
}

}  // namespace attune
