#include "core/schema/half_weight_matmul.h"
#include "core/schema/quantized_matmul.h"
#include "ops/quantized/kernels.h"
#include "ops/registry.h"

namespace attune {

void RegisterQuantizedKernels(KernelRegistry& registry) {
  registry.Register(qmatmul::kDomain, qmatmul::kOpType, 1, quantized::MakeMatMulNBitsKernel);
  registry.Register(halfw::kDomain, halfw::kOpType, 1, quantized::MakeHalfWeightMatMulKernel);
}

}  // namespace attune
