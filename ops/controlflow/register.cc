#include "ops/controlflow/kernels.h"
#include "ops/registry.h"

namespace attune {

void RegisterControlFlowKernels(KernelRegistry& registry) {
  registry.Register("", "If", 1, MakeIfKernel);
  registry.Register("", "Loop", 1, MakeLoopKernel);
  registry.Register("", "Scan", 9, MakeScanKernel);
}

}  // namespace attune
