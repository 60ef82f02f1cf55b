// ONNX MeanVarianceNormalization (mean_variance_normalization.cc).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

absl::StatusOr<std::unique_ptr<Kernel>> MakeMeanVarianceNormalizationKernel(const KernelInfo& info);

}  // namespace attune
