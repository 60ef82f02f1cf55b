// attune.HalfWeightMatMul: Y = A · Wᵀ (+ bias) with W float16 or bfloat16
// [N, K] (core/schema/half_weight_matmul.h). The kernel holds W as it is
// (the plan drops its own copy) and widens it in registers.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/schema/half_weight_matmul.h"
#include "ops/common/node_label.h"
#include "ops/quantized/half_weights.h"
#include "ops/quantized/kernels.h"
#include "ops/quantized/nbits_weights.h"

namespace attune::quantized {
namespace {

class HalfWeightMatMulKernel final : public Kernel {
 public:
  HalfWeightMatMulKernel(std::string label, Tensor w) : label_(std::move(label)), w_(std::move(w)) {
    view_.w = static_cast<const uint16_t*>(w_.raw_data());
    view_.bf16 = w_.type() == ElementType::kBFloat16;
    view_.n = w_.shape()[0];
    view_.k = w_.shape()[1];
  }

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(halfw::kInputA);
    if (a == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": input 'A' is missing"));
    if (a->type() != ElementType::kFloat32 || a->rank() < 1 || a->shape().back() != view_.k)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input 'A' is ", a->DebugString(),
                                                     "; expected float32 with last dim K = ", view_.k));
    const Tensor* bias = ctx.input(halfw::kInputBias);
    if (bias != nullptr && (bias->type() != ElementType::kFloat32 || bias->shape() != std::vector<int64_t>{view_.n}))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input 'bias' is ", bias->DebugString(),
                                                     ", expected float32 [N] = [", view_.n, "]"));
    std::vector<int64_t> out_shape(a->shape().begin(), a->shape().end() - 1);
    out_shape.push_back(view_.n);
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, ElementType::kFloat32, out_shape));
    const int64_t m = a->num_elements() / view_.k;
    if (m == 0) return absl::OkStatus();
    MultiplyHalfWeights(SelectedHalfKernels(), view_, a->data<float>(), m,
                        bias != nullptr ? bias->data<float>() : nullptr, y->data<float>(), ctx.threads());
    return absl::OkStatus();
  }

  std::shared_ptr<const ConstantHolder> HeldInput(int i) const override {
    return i == halfw::kInputW ? std::make_shared<TensorHolder>(w_) : nullptr;
  }

 private:
  std::string label_;
  Tensor w_;
  HalfView view_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeHalfWeightMatMulKernel(const KernelInfo& info) {
  const std::string label = NodeLabel(info);
  if (info.num_inputs() < 2 || !info.input_present[halfw::kInputA] || !info.input_present[halfw::kInputW])
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs A and W"));
  ASSIGN_OR_RETURN(Tensor w, ConstantInput(info, halfw::kInputW, label, "W"));
  if ((w.type() != ElementType::kFloat16 && w.type() != ElementType::kBFloat16) || w.rank() != 2 ||
      w.num_elements() == 0)
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": input 'W' is ", w.DebugString(), "; expected float16 or bfloat16 [N, K]"));
  return std::make_unique<HalfWeightMatMulKernel>(label, std::move(w));
}

}  // namespace attune::quantized
