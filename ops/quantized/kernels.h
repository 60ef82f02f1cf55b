// Factories of the quantized-product kernels.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune::quantized {

absl::StatusOr<std::unique_ptr<Kernel>> MakeMatMulNBitsKernel(const KernelInfo& info);

}  // namespace attune::quantized
