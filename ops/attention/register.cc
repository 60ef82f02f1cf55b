#include "ops/registry.h"

namespace attune {

void RegisterAttentionKernels(KernelRegistry& registry) {}

}  // namespace attune
