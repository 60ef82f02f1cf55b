// Kernel factories of the signal family (registered in register.cc).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

enum class WindowKind { kHann, kHamming, kBlackman };

/// HannWindow, HammingWindow, BlackmanWindow (windows.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeWindowKernel(const KernelInfo& info, WindowKind kind);

/// DFT (opsets 17, 20) and STFT (opset 17) (dft.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeDftKernel(const KernelInfo& info);
absl::StatusOr<std::unique_ptr<Kernel>> MakeStftKernel(const KernelInfo& info);

/// MelWeightMatrix (opset 17) (mel_weight_matrix.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeMelWeightMatrixKernel(const KernelInfo& info);

}  // namespace attune
