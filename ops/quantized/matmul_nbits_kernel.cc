// com.microsoft.MatMulNBits: Y = A · dequantize(B) (+ bias) with B packed
// block-wise at 2, 4 or 8 bits (core/schema/quantized_matmul.h). Every shape
// and attribute is checked when the plan is built; the kernel holds B, the
// scales and the zero points as the file has them (no float32 copy of the
// weights) and the plan drops its own. float16 A runs in float32 inside, as
// ONNX Runtime's CPU kernel does.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/schema/quantized_matmul.h"
#include "ops/common/node_label.h"
#include "ops/quantized/kernels.h"
#include "ops/quantized/nbits_weights.h"

namespace attune::quantized {
namespace {

using qmatmul::kInputA;
using qmatmul::kInputB;
using qmatmul::kInputBias;
using qmatmul::kInputGroupIndex;
using qmatmul::kInputScales;
using qmatmul::kInputZeroPoints;

class MatMulNBitsKernel final : public Kernel {
 public:
  MatMulNBitsKernel(std::string label, std::unique_ptr<NBitsWeights> weights, ElementType a_type)
      : label_(std::move(label)), weights_(std::move(weights)), a_type_(a_type) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(kInputA);
    if (a == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": input 'A' is missing"));
    const int64_t k = weights_->params().k, n = weights_->params().n;
    if (a->type() != a_type_)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input 'A' is ", ElementTypeName(a->type()),
                                                     ", expected ", ElementTypeName(a_type_), " like the scales"));
    if (a->rank() < 1 || a->shape().back() != k)
      return absl::InvalidArgumentError(
          absl::StrCat(label_, ": input 'A' has shape ", a->DebugString(), "; its last dim must be K = ", k));
    std::vector<int64_t> out_shape(a->shape().begin(), a->shape().end() - 1);
    out_shape.push_back(n);
    const int64_t m = a->num_elements() / k;
    const Tensor* bias = ctx.input(kInputBias);
    if (bias != nullptr && (bias->type() != a_type_ || bias->shape() != std::vector<int64_t>{n}))
      return absl::InvalidArgumentError(
          absl::StrCat(label_, ": input 'bias' is ", bias->DebugString(), ", expected [N] = [", n, "] of A's type"));
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, a_type_, out_shape));
    if (m == 0) return absl::OkStatus();
    const NBitsKernelSet& kernels = SelectedNBitsKernels();
    if (a_type_ == ElementType::kFloat32)
      return weights_->Multiply(kernels, a->data<float>(), m, bias != nullptr ? bias->data<float>() : nullptr,
                                y->data<float>(), ctx.threads());
    // float16: widen A and the bias, multiply in float32, round the result once.
    ASSIGN_OR_RETURN(Tensor a32, ctx.AllocateScratchForOverwrite(ElementType::kFloat32, {m, k}));
    ASSIGN_OR_RETURN(Tensor y32, ctx.AllocateScratchForOverwrite(ElementType::kFloat32, {m, n}));
    for (int64_t i = 0; i < m * k; ++i) a32.data<float>()[i] = HalfToFloat(a->data<Float16>()[i]);
    std::vector<float> bias32;
    if (bias != nullptr)
      for (int64_t j = 0; j < n; ++j) bias32.push_back(HalfToFloat(bias->data<Float16>()[j]));
    RETURN_IF_ERROR(weights_->Multiply(kernels, a32.data<float>(), m, bias != nullptr ? bias32.data() : nullptr,
                                       y32.data<float>(), ctx.threads()));
    for (int64_t i = 0; i < m * n; ++i) y->data<Float16>()[i] = FloatToHalf(y32.data<float>()[i]);
    return absl::OkStatus();
  }

  std::shared_ptr<const ConstantHolder> HeldInput(int i) const override {
    if (i != kInputB && i != kInputScales && i != kInputZeroPoints) return nullptr;
    const Tensor& t = weights_->original(i);
    return t.empty() ? nullptr : std::make_shared<TensorHolder>(t);
  }

 private:
  std::string label_;
  std::unique_ptr<NBitsWeights> weights_;
  ElementType a_type_;
};

bool Present(const KernelInfo& info, int i) { return i < info.num_inputs() && info.input_present[i]; }

std::optional<qmatmul::TensorFacts> FactsOf(const KernelInfo& info, int i) {
  if (!Present(info, i)) return std::nullopt;
  if (i < static_cast<int>(info.constant_inputs.size()) && info.constant_inputs[i] != nullptr)
    return qmatmul::TensorFacts{info.constant_inputs[i]->type(), info.constant_inputs[i]->shape()};
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeMatMulNBitsKernel(const KernelInfo& info) {
  const std::string label = NodeLabel(info);
  ASSIGN_OR_RETURN(qmatmul::QuantizedMatMulParams params, qmatmul::ReadQuantizedMatMulParams(info.attrs(), label));
  for (int i : {kInputA, kInputB, kInputScales})
    if (!Present(info, i))
      return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs A, B and scales"));
  if (Present(info, kInputGroupIndex))
    return absl::UnimplementedError(absl::StrCat(
        label, ": input 'g_idx' (deprecated act-order group index) is not supported; quantize without act-order"));
  ASSIGN_OR_RETURN(Tensor b, ConstantInput(info, kInputB, label, "B"));
  ASSIGN_OR_RETURN(Tensor scales, ConstantInput(info, kInputScales, label, "scales"));
  Tensor zero_points;
  if (Present(info, kInputZeroPoints)) {
    ASSIGN_OR_RETURN(zero_points, ConstantInput(info, kInputZeroPoints, label, "zero_points"));
  }
  const ElementType a_type = info.input_types.size() > 0 && info.input_types[0] ? *info.input_types[0] : scales.type();
  std::optional<qmatmul::TensorFacts> zp_facts, bias_facts = FactsOf(info, kInputBias);  // a bias computed at run time is checked per call
  if (!zero_points.empty()) zp_facts = qmatmul::TensorFacts{zero_points.type(), zero_points.shape()};
  RETURN_IF_ERROR(qmatmul::CheckQuantizedMatMulInputs(params, label, a_type, {b.type(), b.shape()},
                                                      {scales.type(), scales.shape()}, zp_facts, bias_facts));
  ASSIGN_OR_RETURN(auto weights, NBitsWeights::Create(params, label, std::move(b), std::move(scales),
                                                      std::move(zero_points)));
  return std::make_unique<MatMulNBitsKernel>(label, std::move(weights), a_type);
}

}  // namespace attune::quantized
