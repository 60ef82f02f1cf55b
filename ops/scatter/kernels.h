// Factories of the scatter family; register.cc maps ops and opsets to them.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune::scatter {

/// ScatterND (opsets 11+; `reduction` from 16).
absl::StatusOr<std::unique_ptr<Kernel>> MakeScatterNDKernel(const KernelInfo& info);
/// ScatterElements (opsets 11+; `reduction` from 16) and the Scatter of opsets
/// 9-10, which is the same op without `reduction`.
absl::StatusOr<std::unique_ptr<Kernel>> MakeScatterElementsKernel(const KernelInfo& info);

/// TensorScatter (opset 24): a cache update along a sequence axis (tensor_scatter.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeTensorScatterKernel(const KernelInfo& info);

}  // namespace attune::scatter
