// Kernel factories of the signal family (registered in register.cc).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

enum class WindowKind { kHann, kHamming, kBlackman };

/// HannWindow, HammingWindow, BlackmanWindow (windows.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeWindowKernel(const KernelInfo& info, WindowKind kind);

}  // namespace attune
