// The shape family: ops that move, view or describe data without arithmetic.
// Opset-dependent meanings (attribute vs input) are handled inside each
// factory from KernelInfo::opset; the first opset listed is the oldest supported.
#include "ops/registry.h"
#include "ops/shape/reverse_sequence.h"
#include "ops/shape/shape_kernels.h"

namespace attune {

void RegisterShapeKernels(KernelRegistry& registry) {
  registry.Register("", "Reshape", 1, MakeReshapeKernel);      // shape attribute before 5, allowzero from 14
  registry.Register("", "Flatten", 1, MakeFlattenKernel);
  registry.Register("", "Squeeze", 1, MakeSqueezeKernel);      // axes attribute before 13
  registry.Register("", "Unsqueeze", 1, MakeUnsqueezeKernel);  // axes attribute before 13
  registry.Register("", "Identity", 1, MakeIdentityKernel);
  registry.Register("", "Dropout", 7, MakeDropoutKernel);      // ratio/training_mode inputs from 12
  registry.Register("", "Transpose", 1, MakeTransposeKernel);
  registry.Register("", "Concat", 1, MakeConcatKernel);
  registry.Register("", "Split", 2, MakeSplitKernel);          // split input from 13, num_outputs from 18
  registry.Register("", "Slice", 1, MakeSliceKernel);          // attributes before 10
  registry.Register("", "Gather", 1, MakeGatherKernel);
  registry.Register("", "GatherElements", 11, MakeGatherElementsKernel);
  registry.Register("", "Expand", 8, MakeExpandKernel);
  registry.Register("", "Tile", 6, MakeTileKernel);
  registry.Register("", "Trilu", 14, MakeTriluKernel);
  registry.Register("", "DepthToSpace", 1, MakeDepthToSpaceKernel);  // mode from 11
  registry.Register("", "SpaceToDepth", 1, MakeSpaceToDepthKernel);
  registry.Register("", "CenterCropPad", 18, MakeCenterCropPadKernel);
  registry.Register("", "Pad", 1, MakePadKernel);  // pads an input from 11, axes from 18, wrap from 19
  registry.Register("", "ReverseSequence", 10, MakeReverseSequenceKernel);
  registry.Register("", "Shape", 1, MakeShapeKernel);          // start/end from 15
  registry.Register("", "Size", 1, MakeSizeKernel);
  registry.Register("", "Constant", 1, MakeConstantKernel);
  registry.Register("", "ConstantOfShape", 9, MakeConstantOfShapeKernel);
  registry.Register("", "Range", 11, MakeRangeKernel);
}

}  // namespace attune
