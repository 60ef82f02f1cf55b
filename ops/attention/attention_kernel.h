// The kernel behind both attune.MultiHeadAttention and ONNX Attention: one
// implementation, parameterised by AttentionParams.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/attention/attention_params.h"
#include "ops/kernel.h"

namespace attune::attention {

class AttentionKernel final : public Kernel {
 public:
  explicit AttentionKernel(AttentionParams params) : params_(params) {}
  absl::Status Run(KernelContext& ctx) const override;

 private:
  AttentionParams params_;
};

/// Kernel factories for the registry.
absl::StatusOr<std::unique_ptr<Kernel>> CreateMultiHeadAttentionKernel(const KernelInfo& info);
absl::StatusOr<std::unique_ptr<Kernel>> CreateOnnxAttentionKernel(const KernelInfo& info);

}  // namespace attune::attention
