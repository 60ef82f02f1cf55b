// Kernel factories of the loss family (registered in register.cc).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

/// NegativeLogLikelihoodLoss, or with `softmax` SoftmaxCrossEntropyLoss.
absl::StatusOr<std::unique_ptr<Kernel>> MakeClassLossKernel(const KernelInfo& info, bool softmax);

}  // namespace attune
