#include "ops/norm/channel_norms.h"
#include "ops/norm/kernels.h"
#include "ops/registry.h"

namespace attune {

void RegisterNormKernels(KernelRegistry& registry) {
  // Standard from opset 17; before that ONNX Runtime already accepted it in
  // the default domain with the same inputs, attributes and outputs, and its
  // transformer optimizer writes it into models of opsets 11-16.
  registry.Register("", "LayerNormalization", 1, MakeLayerNormalizationKernel);
  // Standard from opset 23; at every opset because the RMS norm fusion
  // writes it into graphs of older ones, and no earlier op of that name exists.
  registry.Register("", "RMSNormalization", 1, MakeRmsNormalizationKernel);
  // The residual Add and the norm after it (engine/passes/op_fusion/skip_norm_rule.h).
  registry.Register("attune", "SkipLayerNormalization", 1, MakeSkipLayerNormalizationKernel);
  registry.Register("attune", "SkipRMSNormalization", 1, MakeSkipRmsNormalizationKernel);
  // CNN norms. BatchNormalization-1 to -15 differ in attributes only
  // (is_test, spatial, training_mode); training mode is refused.
  registry.Register("", "BatchNormalization", 1, MakeBatchNormalizationKernel);
  registry.Register("", "InstanceNormalization", 1, MakeInstanceNormalizationKernel);
  // Scale and bias per group at opset 18, per channel from 21.
  registry.Register("", "GroupNormalization", 18, MakeGroupNormalizationKernel);
  registry.Register("", "LpNormalization", 1, MakeLpNormalizationKernel);
  registry.Register("", "LRN", 1, MakeLrnKernel);
  registry.Register("", "MeanVarianceNormalization", 9, MakeMeanVarianceNormalizationKernel);
}

}  // namespace attune
