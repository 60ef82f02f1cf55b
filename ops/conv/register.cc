#include "ops/conv/kernels.h"
#include "ops/registry.h"

namespace attune {

void RegisterConvKernels(KernelRegistry& registry) {
  // Conv-1, -11 and -22 differ in their type lists and auto_pad's wording only.
  registry.Register("", "Conv", 1, MakeConvKernel);
  registry.Register("attune", "FusedConv", 1, MakeFusedConvKernel);
  registry.Register("", "ConvTranspose", 1, MakeConvTransposeKernel);
  registry.Register("", "CausalConvWithState", 27, MakeCausalConvWithStateKernel);
  registry.Register("", "Col2Im", 18, MakeCol2ImKernel);
}

}  // namespace attune
