// attune.HalfWeightMatMul: Y = A · Wᵀ (+ bias) with W float16 or bfloat16
// [N, K] (core/schema/half_weight_matmul.h). At accuracy_level 1 the kernel
// holds W as it is (the plan drops its own copy) and widens it in registers.
// At level 3 over bfloat16 W, A is rounded to bfloat16 and the product runs
// on oneDNN's bf16 matmul over W packed once (the packed copy is the only one
// held); where oneDNN has no bf16 kernel, W is widened as at level 1 and
// multiplied with the rounded A, which gives the same products, summed in
// another order.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/schema/half_weight_matmul.h"
#include "core/memory/pooled_buffer.h"
#include "ops/common/node_label.h"
#include "ops/quantized/bf16_product_onednn.h"
#include "ops/quantized/half_weights.h"
#include "ops/quantized/kernels.h"
#include "ops/quantized/nbits_weights.h"

namespace attune::quantized {
namespace {

class HalfWeightMatMulKernel final : public Kernel {
 public:
  HalfWeightMatMulKernel(std::string label, Tensor w, bool round_a, std::unique_ptr<Bf16PackedProduct> packed)
      : label_(std::move(label)), w_(std::move(w)), round_a_(round_a), packed_(std::move(packed)) {
    view_.bf16 = w_.type() == ElementType::kBFloat16;
    view_.n = w_.shape()[0];
    view_.k = w_.shape()[1];
    if (packed_ != nullptr) w_ = Tensor();  // the packed copy holds W now
    else view_.w = static_cast<const uint16_t*>(w_.raw_data());
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
    const float* bias_data = bias != nullptr ? bias->data<float>() : nullptr;
    if (!round_a_) {
      MultiplyHalfWeights(SelectedHalfKernels(), view_, a->data<float>(), m, bias_data, y->data<float>(), ctx.threads());
      return absl::OkStatus();
    }
    return RunRounded(a->data<float>(), m, bias_data, y->data<float>(), ctx.threads());
  }

  std::shared_ptr<const ConstantHolder> HeldInput(int i) const override {
    if (i != halfw::kInputW) return nullptr;
    return packed_ != nullptr ? packed_->holder() : std::make_shared<TensorHolder>(w_);
  }

 private:
  // A rounded to bfloat16: on the packed product, or widened back to float
  // (exactly) for the level-1 path when oneDNN has no bf16 kernel here.
  absl::Status RunRounded(const float* a, int64_t m, const float* bias, float* y, int threads) const {
    const HalfKernelSet& kernels = SelectedHalfKernels();
    const int64_t count = m * view_.k;
    PooledBuffer rounded(static_cast<size_t>(count) * sizeof(uint16_t));
    if (rounded.data() == nullptr) return absl::ResourceExhaustedError(absl::StrCat(label_, ": out of memory"));
    uint16_t* bits = static_cast<uint16_t*>(rounded.data());
    kernels.round_to_bf16(a, count, bits);
    if (packed_ != nullptr) return Annotate(packed_->Run(bits, m, bias, y, threads));
    std::vector<float> widened(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) widened[i] = BFloat16ToFloat(BFloat16{bits[i]});
    MultiplyHalfWeights(kernels, view_, widened.data(), m, bias, y, threads);
    return absl::OkStatus();
  }

  absl::Status Annotate(absl::Status s) const {
    return s.ok() ? s : absl::Status(s.code(), absl::StrCat(label_, ": ", s.message()));
  }

  std::string label_;
  Tensor w_;
  HalfView view_;
  bool round_a_;
  std::unique_ptr<Bf16PackedProduct> packed_;
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
  ASSIGN_OR_RETURN(int64_t level, info.attrs().GetInt(halfw::kAccuracyLevel, halfw::kFloat32Activations));
  if (level < 0 || level > 4)
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'accuracy_level' is ", level, "; expected 0 to 4"));
  // Levels 0 (unset) and 1 keep A in float32; float16 W always does.
  const bool round_a = level >= 2 && w.type() == ElementType::kBFloat16;
  std::unique_ptr<quantized::Bf16PackedProduct> packed;
  if (round_a) {
    ASSIGN_OR_RETURN(packed, quantized::Bf16PackedProduct::Create(static_cast<const uint16_t*>(w.raw_data()),
                                                                  w.shape()[0], w.shape()[1]));
  }
  return std::make_unique<HalfWeightMatMulKernel>(label, std::move(w), round_a, std::move(packed));
}

}  // namespace attune::quantized
