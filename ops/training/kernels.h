// Kernel factories of the training family (registered in register.cc): the
// optimizer steps of the ai.onnx.preview.training domain, which are plain
// element-wise updates and run like any other op.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

enum class OptimizerKind { kAdagrad, kAdam, kMomentum };

/// Adagrad, Adam, Momentum (ai.onnx.preview.training, opset 1) over one or more tensors (optimizers.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeOptimizerKernel(const KernelInfo& info, OptimizerKind kind);

}  // namespace attune
