#include "ops/matmul/det.h"
#include "ops/matmul/kernels.h"
#include "ops/registry.h"

namespace attune {

void RegisterMatMulKernels(KernelRegistry& registry) {
  registry.Register("", "MatMul", 1, MakeMatMulKernel);
  registry.Register("", "Gemm", 7, 10, [](const KernelInfo& info) { return MakeGemmKernel(info, true); });
  registry.Register("", "Gemm", 11, [](const KernelInfo& info) { return MakeGemmKernel(info, false); });
  registry.Register("", "Einsum", 12, MakeEinsumKernel);
  registry.Register("", "Det", 11, MakeDetKernel);
  registry.Register("attune", "FusedMatMul", 1, MakeFusedMatMulKernel);
  registry.Register("attune", "FusedGemm", 1, MakeFusedGemmKernel);
}

}  // namespace attune
