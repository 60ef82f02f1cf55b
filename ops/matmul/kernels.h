// Kernel factories of the matmul family (registered in register.cc).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"
#include "ops/matmul/product_epilogue.h"

namespace attune {

/// ONNX MatMul (opsets 1, 9, 13): numpy matrix product.
absl::StatusOr<std::unique_ptr<Kernel>> MakeMatMulKernel(const KernelInfo& info);
/// MatMul with an epilogue (attune.FusedMatMul without trans_b), named `label`.
absl::StatusOr<std::unique_ptr<Kernel>> MakeMatMulKernelWith(const KernelInfo& info, std::string label,
                                                             const ProductEpilogue& epilogue);
/// ONNX Gemm (opsets 7 to 10: C required; 11 and later: C optional).
absl::StatusOr<std::unique_ptr<Kernel>> MakeGemmKernel(const KernelInfo& info, bool c_required);
/// attune.FusedGemm (opset 1): Gemm with an epilogue (product_epilogue.h).
absl::StatusOr<std::unique_ptr<Kernel>> MakeFusedGemmKernel(const KernelInfo& info);
/// attune.FusedMatMul (opset 1): MatMul with B read transposed (trans_b) and
/// an epilogue.
absl::StatusOr<std::unique_ptr<Kernel>> MakeFusedMatMulKernel(const KernelInfo& info);
/// ONNX Einsum (opset 12).
absl::StatusOr<std::unique_ptr<Kernel>> MakeEinsumKernel(const KernelInfo& info);

}  // namespace attune
