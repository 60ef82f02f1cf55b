// One entry point that registers every kernel family.
#pragma once

namespace attune {

class KernelRegistry;

/// Calls each family's Register*Kernels (ops/<family>/register.cc).
void RegisterAllKernels(KernelRegistry& registry);

}  // namespace attune
