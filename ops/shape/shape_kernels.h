// Factories of the shape-family kernels; ops/shape/register.cc maps them to op types and opsets.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

using KernelOr = absl::StatusOr<std::unique_ptr<Kernel>>;

// Views of the input's buffer (no copy): reshape_ops.cc.
KernelOr MakeReshapeKernel(const KernelInfo& info);
KernelOr MakeFlattenKernel(const KernelInfo& info);
KernelOr MakeSqueezeKernel(const KernelInfo& info);
KernelOr MakeUnsqueezeKernel(const KernelInfo& info);
KernelOr MakeIdentityKernel(const KernelInfo& info);
KernelOr MakeDropoutKernel(const KernelInfo& info);

// Data movement: transpose.cc, concat_split.cc, slice.cc, gather.cc, expand_tile.cc, trilu.cc.
KernelOr MakeTransposeKernel(const KernelInfo& info);
KernelOr MakeConcatKernel(const KernelInfo& info);
KernelOr MakeSplitKernel(const KernelInfo& info);
KernelOr MakeSliceKernel(const KernelInfo& info);
KernelOr MakeGatherKernel(const KernelInfo& info);
KernelOr MakeGatherElementsKernel(const KernelInfo& info);
KernelOr MakeExpandKernel(const KernelInfo& info);
KernelOr MakeTileKernel(const KernelInfo& info);
KernelOr MakeTriluKernel(const KernelInfo& info);
/// DepthToSpace (mode DCR or CRD) and SpaceToDepth (depth_space.cc).
KernelOr MakeDepthToSpaceKernel(const KernelInfo& info);
KernelOr MakeSpaceToDepthKernel(const KernelInfo& info);
/// Pad: constant, reflect, edge, wrap (pad.cc).
KernelOr MakePadKernel(const KernelInfo& info);
KernelOr MakeCenterCropPadKernel(const KernelInfo& info);

// Shapes and constants: shape_ops.cc, constant_ops.cc.
KernelOr MakeShapeKernel(const KernelInfo& info);
KernelOr MakeSizeKernel(const KernelInfo& info);
KernelOr MakeConstantKernel(const KernelInfo& info);
KernelOr MakeConstantOfShapeKernel(const KernelInfo& info);
KernelOr MakeRangeKernel(const KernelInfo& info);

}  // namespace attune
