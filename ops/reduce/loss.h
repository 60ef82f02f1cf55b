// ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (loss.cc).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

absl::StatusOr<std::unique_ptr<Kernel>> MakeNegativeLogLikelihoodLossKernel(const KernelInfo& info);
absl::StatusOr<std::unique_ptr<Kernel>> MakeSoftmaxCrossEntropyLossKernel(const KernelInfo& info);

}  // namespace attune
