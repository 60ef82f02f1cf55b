#include "ops/register_all.h"

#include "ops/registry.h"

namespace attune {

void RegisterElementwiseKernels(KernelRegistry& registry);
void RegisterMatMulKernels(KernelRegistry& registry);
void RegisterReduceKernels(KernelRegistry& registry);
void RegisterShapeKernels(KernelRegistry& registry);
void RegisterNormKernels(KernelRegistry& registry);
void RegisterAttentionKernels(KernelRegistry& registry);
void RegisterScatterKernels(KernelRegistry& registry);
void RegisterConvKernels(KernelRegistry& registry);
void RegisterQuantizeKernels(KernelRegistry& registry);
void RegisterQuantizedKernels(KernelRegistry& registry);
void RegisterPoolKernels(KernelRegistry& registry);
void RegisterResizeKernels(KernelRegistry& registry);
void RegisterLossKernels(KernelRegistry& registry);
void RegisterSelectKernels(KernelRegistry& registry);
void RegisterSignalKernels(KernelRegistry& registry);
void RegisterContribKernels(KernelRegistry& registry);
void RegisterRecurrentKernels(KernelRegistry& registry);
void RegisterTrainingKernels(KernelRegistry& registry);
void RegisterControlFlowKernels(KernelRegistry& registry);

void RegisterAllKernels(KernelRegistry& registry) {
  RegisterElementwiseKernels(registry);
  RegisterMatMulKernels(registry);
  RegisterReduceKernels(registry);
  RegisterShapeKernels(registry);
  RegisterNormKernels(registry);
  RegisterAttentionKernels(registry);
  RegisterScatterKernels(registry);
  RegisterConvKernels(registry);
  RegisterQuantizeKernels(registry);
  RegisterQuantizedKernels(registry);
  RegisterPoolKernels(registry);
  RegisterResizeKernels(registry);
  RegisterLossKernels(registry);
  RegisterSelectKernels(registry);
  RegisterSignalKernels(registry);
  RegisterContribKernels(registry);
  RegisterRecurrentKernels(registry);
  RegisterTrainingKernels(registry);
  RegisterControlFlowKernels(registry);
}

}  // namespace attune
