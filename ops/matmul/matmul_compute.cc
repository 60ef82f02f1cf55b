#include "ops/matmul/matmul_compute.h"

#include "core/common/status_macros.h"
#include "core/memory/pooled_buffer.h"
#include "ops/common/half_convert.h"
#include "ops/matmul/matmul_reference.h"
#include "ops/matmul/onednn_matmul.h"

namespace attune {
namespace {

bool OneDnnTakes(const MatMulShape& shape, bool trans_a) {
  return OneDnnMatMulSupportsBatchRank(shape.out_batch.size()) && (!trans_a || shape.out_batch.empty());
}

// float16 operands widened to float32 (exactly), multiplied by oneDNN's
// sgemm and rounded to float16 once: the reference loop's float32 sums and
// single rounding, summed in another order. Falls back to the reference when
// the buffers cannot be had.
absl::Status HalfMatMulInFloat(const MatMulShape& shape, const Tensor& a, const Tensor& b, Tensor& c, int threads,
                               bool trans_a, bool trans_b) {
  const int64_t na = a.num_elements(), nb = b.num_elements(), nc = c.num_elements();
  PooledBuffer a32(static_cast<size_t>(na) * sizeof(float));
  PooledBuffer b32(static_cast<size_t>(nb) * sizeof(float));
  PooledBuffer c32(static_cast<size_t>(nc) * sizeof(float));
  if (a32.data() == nullptr || b32.data() == nullptr || c32.data() == nullptr)
    return ReferenceMatMul(shape, a, b, c, threads, trans_a, trans_b);
  float* af = static_cast<float*>(a32.data());
  float* bf = static_cast<float*>(b32.data());
  float* cf = static_cast<float*>(c32.data());
  WidenHalf(a.data<uint16_t>(), na, af, threads);
  WidenHalf(b.data<uint16_t>(), nb, bf, threads);
  RETURN_IF_ERROR(OneDnnMatMul(shape, af, bf, cf, threads, trans_a, trans_b));
  NarrowToHalf(cf, nc, c.data<uint16_t>(), threads);
  return absl::OkStatus();
}

}  // namespace

absl::Status ComputeMatMul(const MatMulShape& shape, const Tensor& a, const Tensor& b, Tensor& c, int threads,
                           bool trans_a, bool trans_b) {
  if (a.type() == ElementType::kFloat32 && OneDnnTakes(shape, trans_a))
    return OneDnnMatMul(shape, a.data<float>(), b.data<float>(), c.data<float>(), threads, trans_a, trans_b);
  if (a.type() == ElementType::kFloat16 && b.type() == ElementType::kFloat16 && OneDnnTakes(shape, trans_a) &&
      c.num_elements() > 0)
    return HalfMatMulInFloat(shape, a, b, c, threads, trans_a, trans_b);
  return ReferenceMatMul(shape, a, b, c, threads, trans_a, trans_b);
}

}  // namespace attune
