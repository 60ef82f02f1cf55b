#include "ops/norm/kernels.h"
#include "ops/registry.h"

namespace attune {

void RegisterNormKernels(KernelRegistry& registry) {
  // Standard from opset 17; before that ONNX Runtime already accepted it in
  // the default domain with the same inputs, attributes and outputs, and its
  // transformer optimizer writes it into models of opsets 11-16.
  registry.Register("", "LayerNormalization", 1, MakeLayerNormalizationKernel);
  registry.Register("", "RMSNormalization", 23, MakeRmsNormalizationKernel);
}

}  // namespace attune
