#include "ops/registry.h"
#include "ops/signal/kernels.h"

namespace attune {

void RegisterSignalKernels(KernelRegistry& registry) {
  registry.Register("", "HannWindow", 17, [](const KernelInfo& i) { return MakeWindowKernel(i, WindowKind::kHann); });
  registry.Register("", "HammingWindow", 17,
                    [](const KernelInfo& i) { return MakeWindowKernel(i, WindowKind::kHamming); });
  registry.Register("", "BlackmanWindow", 17,
                    [](const KernelInfo& i) { return MakeWindowKernel(i, WindowKind::kBlackman); });
  registry.Register("", "DFT", 17, MakeDftKernel);
  registry.Register("", "STFT", 17, MakeStftKernel);
  registry.Register("", "MelWeightMatrix", 17, MakeMelWeightMatrixKernel);
}

}  // namespace attune
