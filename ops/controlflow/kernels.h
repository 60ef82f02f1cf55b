// Kernel factories of the control-flow family (registered in register.cc):
// If, Loop and Scan, which run subgraphs through KernelInfo::subgraph_evaluator.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

/// If (every opset): runs then_branch or else_branch on a one-element bool cond (if.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeIfKernel(const KernelInfo& info);

/// Loop (every opset): trip count and condition, loop-carried values, scan outputs (loop.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeLoopKernel(const KernelInfo& info);

/// Scan (opset 9 on): scan inputs sliced and scan outputs stacked along any axis, either direction (scan.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeScanKernel(const KernelInfo& info);

}  // namespace attune
