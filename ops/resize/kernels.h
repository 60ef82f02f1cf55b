// Kernel factories of the resize family (registered in register.cc).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

/// Resize (opsets 10 to 19) and Upsample (7 to 9).
absl::StatusOr<std::unique_ptr<Kernel>> MakeResizeKernel(const KernelInfo& info);
absl::StatusOr<std::unique_ptr<Kernel>> MakeUpsampleKernel(const KernelInfo& info);
/// GridSample (opsets 16, 20, 22), grid_sample.cc.
absl::StatusOr<std::unique_ptr<Kernel>> MakeGridSampleKernel(const KernelInfo& info);
/// AffineGrid (opset 20): GridSample's grid from affine matrices (affine_grid.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeAffineGridKernel(const KernelInfo& info);

}  // namespace attune
