// Factories of the reduce-family kernels; ops/reduce/register.cc maps them to op types and opsets.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

using ReduceKernelOr = absl::StatusOr<std::unique_ptr<Kernel>>;

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

/// ReduceXxx: `axes_input_since` is the opset from which axes is an input (13 for ReduceSum, 18 for the rest).
ReduceKernelOr MakeReduceKernel(const KernelInfo& info, ReduceKind kind, int axes_input_since);
/// Softmax / LogSoftmax; opsets before 13 flatten to 2-D at the axis.
ReduceKernelOr MakeSoftmaxKernel(const KernelInfo& info, bool log);
/// ArgMax / ArgMin.
ReduceKernelOr MakeArgReduceKernel(const KernelInfo& info, bool is_max);
ReduceKernelOr MakeCumSumKernel(const KernelInfo& info);
ReduceKernelOr MakeCumProdKernel(const KernelInfo& info);

}  // namespace attune
