// Kernel factories of the quantization family (registered in register.cc).
#pragma once

#include "ops/kernel.h"

namespace attune::quantize {

KernelFactory QuantizeLinearKernel();
KernelFactory DequantizeLinearKernel();
KernelFactory DynamicQuantizeLinearKernel();
KernelFactory MatMulIntegerKernel();
KernelFactory QLinearMatMulKernel();
KernelFactory MatMulIntegerToFloatKernel();
KernelFactory DynamicQuantizeMatMulKernel();

}  // namespace attune::quantize
