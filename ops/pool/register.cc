#include "ops/pool/kernels.h"
#include "ops/registry.h"

namespace attune {

void RegisterPoolKernels(KernelRegistry& registry) {
  // Later opsets add attributes (MaxPool-8 Indices and storage_order, -10
  // ceil_mode and dilations, -12 int8/uint8; AveragePool-7 count_include_pad,
  // -10 ceil_mode, -19 dilations; LpPool-2 an int p, -18 ceil_mode); an
  // attribute an older model cannot hold is simply absent, so one kernel serves all.
  registry.Register("", "MaxPool", 1, [](const KernelInfo& i) { return MakeWindowPoolKernel(i, PoolKind::kMax); });
  registry.Register("", "AveragePool", 1,
                    [](const KernelInfo& i) { return MakeWindowPoolKernel(i, PoolKind::kAverage); });
  registry.Register("", "LpPool", 1, [](const KernelInfo& i) { return MakeWindowPoolKernel(i, PoolKind::kLp); });
  registry.Register("", "GlobalMaxPool", 1, [](const KernelInfo& i) { return MakeGlobalPoolKernel(i, PoolKind::kMax); });
  registry.Register("", "GlobalAveragePool", 1,
                    [](const KernelInfo& i) { return MakeGlobalPoolKernel(i, PoolKind::kAverage); });
  registry.Register("", "GlobalLpPool", 1, [](const KernelInfo& i) { return MakeGlobalPoolKernel(i, PoolKind::kLp); });
}

}  // namespace attune
