// Factories of the quantized-product kernels.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune::quantized {

absl::StatusOr<std::unique_ptr<Kernel>> MakeMatMulNBitsKernel(const KernelInfo& info);
absl::StatusOr<std::unique_ptr<Kernel>> MakeHalfWeightMatMulKernel(const KernelInfo& info);

/// A constant input's tensor: its data, or the data a previous plan's kernel
/// holds; Unimplemented naming `label` and the input `name` when it is computed.
absl::StatusOr<Tensor> ConstantInput(const KernelInfo& info, int i, const std::string& label, const char* name);

}  // namespace attune::quantized
