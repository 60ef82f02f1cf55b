#include "ops/registry.h"
#include "ops/training/kernels.h"

namespace attune {

void RegisterTrainingKernels(KernelRegistry& registry) {
  constexpr const char* kDomain = "ai.onnx.preview.training";
  registry.Register(kDomain, "Adagrad", 1, [](const KernelInfo& i) { return MakeOptimizerKernel(i, OptimizerKind::kAdagrad); });
  registry.Register(kDomain, "Adam", 1, [](const KernelInfo& i) { return MakeOptimizerKernel(i, OptimizerKind::kAdam); });
  registry.Register(kDomain, "Momentum", 1,
                    [](const KernelInfo& i) { return MakeOptimizerKernel(i, OptimizerKind::kMomentum); });
}

}  // namespace attune
