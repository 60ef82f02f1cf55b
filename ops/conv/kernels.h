// Kernel factories of the conv family (registered in register.cc).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

/// ONNX Conv (opsets 1, 11, 22: one meaning for float32): oneDNN, or the
/// reference loop for what oneDNN does not take.
absl::StatusOr<std::unique_ptr<Kernel>> MakeConvKernel(const KernelInfo& info);

/// attune.FusedConv: Conv (X, W, B) plus a residual Z of Y's shape, then an
/// activation (conv_epilogue.h), X and Y channels first or last.
absl::StatusOr<std::unique_ptr<Kernel>> MakeFusedConvKernel(const KernelInfo& info);

/// ONNX ConvTranspose (opsets 1, 11, 22), float32 and float64 (conv_transpose.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeConvTransposeKernel(const KernelInfo& info);

/// CausalConvWithState (opset 27): depthwise causal 1-D conv with a carried state (causal_conv_with_state.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeCausalConvWithStateKernel(const KernelInfo& info);

/// Col2Im (opset 18): sliding blocks summed back into an image (col2im.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeCol2ImKernel(const KernelInfo& info);

}  // namespace attune
