#include "ops/quantize/kernels.h"
#include "ops/registry.h"

namespace attune {

void RegisterQuantizeKernels(KernelRegistry& registry) {
  using namespace quantize;
  registry.Register("", "QuantizeLinear", 10, QuantizeLinearKernel());
  registry.Register("", "DequantizeLinear", 10, DequantizeLinearKernel());
  registry.Register("", "DynamicQuantizeLinear", 11, DynamicQuantizeLinearKernel());
  registry.Register("", "MatMulInteger", 10, MatMulIntegerKernel());
  registry.Register("", "QLinearMatMul", 10, QLinearMatMulKernel());
  registry.Register("com.microsoft", "MatMulIntegerToFloat", 1, MatMulIntegerToFloatKernel());
  registry.Register("com.microsoft", "DynamicQuantizeMatMul", 1, DynamicQuantizeMatMulKernel());
  // The dynamic-int8 product the fusion writes (engine/passes/op_fusion/dynamic_int8_rule.h):
  // com.microsoft's contract, exported back as the subgraph it replaced.
  registry.Register("attune", "DynamicQuantizeMatMul", 1, DynamicQuantizeMatMulKernel());
}

}  // namespace attune
