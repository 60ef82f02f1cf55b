#include "ops/loss/kernels.h"
#include "ops/registry.h"

namespace attune {

void RegisterLossKernels(KernelRegistry& registry) {
  // Opsets 12, 13 and 22 differ in their type lists only.
  registry.Register("", "NegativeLogLikelihoodLoss", 12,
                    [](const KernelInfo& i) { return MakeClassLossKernel(i, /*softmax=*/false); });
  registry.Register("", "SoftmaxCrossEntropyLoss", 12,
                    [](const KernelInfo& i) { return MakeClassLossKernel(i, /*softmax=*/true); });
}

}  // namespace attune
