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
/// attune.SkipLayerNormalization (X, Skip, Scale, B) -> (Y, Sum) and
/// attune.SkipRMSNormalization (X, Skip, Scale) -> (Y, Sum): the norm of
/// Sum = X + Skip (of X's shape), with the norm's attributes; Sum is optional.
absl::StatusOr<std::unique_ptr<Kernel>> MakeSkipLayerNormalizationKernel(const KernelInfo& info);
absl::StatusOr<std::unique_ptr<Kernel>> MakeSkipRmsNormalizationKernel(const KernelInfo& info);
/// BatchNormalization (inference), InstanceNormalization, GroupNormalization (channel_norms.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeBatchNormalizationKernel(const KernelInfo& info);
absl::StatusOr<std::unique_ptr<Kernel>> MakeInstanceNormalizationKernel(const KernelInfo& info);
absl::StatusOr<std::unique_ptr<Kernel>> MakeGroupNormalizationKernel(const KernelInfo& info);
/// LpNormalization and LRN (lp_normalization.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeLpNormalizationKernel(const KernelInfo& info);
absl::StatusOr<std::unique_ptr<Kernel>> MakeLrnKernel(const KernelInfo& info);

}  // namespace attune
