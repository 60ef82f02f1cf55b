// ONNX ReverseSequence (opset 10): reverse_sequence.cc.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

absl::StatusOr<std::unique_ptr<Kernel>> MakeReverseSequenceKernel(const KernelInfo& info);

}  // namespace attune
