// Kernel factories of the pool family (registered in register.cc).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

enum class PoolKind { kMax, kAverage, kLp };

/// MaxPool (with its optional Indices output), AveragePool, LpPool.
absl::StatusOr<std::unique_ptr<Kernel>> MakeWindowPoolKernel(const KernelInfo& info, PoolKind kind);
/// GlobalMaxPool, GlobalAveragePool, GlobalLpPool: one window over all spatial axes.
absl::StatusOr<std::unique_ptr<Kernel>> MakeGlobalPoolKernel(const KernelInfo& info, PoolKind kind);

}  // namespace attune
