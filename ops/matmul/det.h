// ONNX Det (opset 11): determinants of an [..., M, M] input (det.cc).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

absl::StatusOr<std::unique_ptr<Kernel>> MakeDetKernel(const KernelInfo& info);

}  // namespace attune
