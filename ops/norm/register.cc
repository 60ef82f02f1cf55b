#include "ops/norm/kernels.h"
#include "ops/registry.h"

namespace attune {

void RegisterNormKernels(KernelRegistry& registry) {
  registry.Register("", "LayerNormalization", 17, MakeLayerNormalizationKernel);
  registry.Register("", "RMSNormalization", 23, MakeRmsNormalizationKernel);
}

}  // namespace attune
