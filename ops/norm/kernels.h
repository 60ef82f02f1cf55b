// Kernel factories of the normalization family (registered in register.cc).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

/// ONNX LayerNormalization (opset 17's meaning at every opset): Y and optional Mean, InvStdDev.
absl::StatusOr<std::unique_ptr<Kernel>> MakeLayerNormalizationKernel(const KernelInfo& info);
/// ONNX RMSNormalization (opset 23).
absl::StatusOr<std::unique_ptr<Kernel>> MakeRmsNormalizationKernel(const KernelInfo& info);

}  // namespace attune
