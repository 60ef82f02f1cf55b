// ONNX MatMul. A constant float32 matrix B goes through one prepared product
// (oneDNN, or the panel GEMV for a few rows): packed and held by the kernel
// when it is B's only reader, else used in place. Everything else is planned
// per call (shapes may change between calls). attune.FusedMatMul without
// trans_b is the same with an epilogue (product_epilogue.h).
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/matmul/kernels.h"
#include "ops/matmul/matmul_compute.h"
#include "ops/matmul/matmul_reference.h"
#include "ops/matmul/matmul_shape.h"
#include "ops/matmul/onednn_matmul.h"

namespace attune {
namespace {

absl::Status CheckOperandTypes(const std::string& label, ElementType a, ElementType b) {
  if (a != b)
    return absl::InvalidArgumentError(absl::StrCat(label, ": A and B must have the same element type, got ",
                                                   ElementTypeName(a), " and ", ElementTypeName(b)));
  if (!ReferenceMatMulSupports(a))
    return absl::UnimplementedError(absl::StrCat(label, ": element type ", ElementTypeName(a), " is not supported"));
  return absl::OkStatus();
}

// attune.FusedMatMul's epilogue inputs (A, B, bias, multiplier).
constexpr int kBiasInput = 2;
constexpr int kMultiplierInput = 3;

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(std::string label, Tensor weights, std::unique_ptr<OneDnnConstantMatMul> packed, bool held,
               ProductEpilogue epilogue)
      : label_(std::move(label)), weights_(std::move(weights)), packed_(std::move(packed)), held_(held),
        epilogue_(epilogue) {}

  absl::Status Run(KernelContext& ctx) const override {
    RETURN_IF_ERROR(RunProduct(ctx));
    return FinishProduct(label_, epilogue_, ctx, kBiasInput, kMultiplierInput);
  }

  std::shared_ptr<const ConstantHolder> HeldInput(int i) const override {
    return held_ && i == 1 ? packed_->holder() : nullptr;
  }

 private:
  absl::Status RunProduct(KernelContext& ctx) const {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (a == nullptr || (b == nullptr && !held_))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs inputs A and B"));
    const ElementType b_type = held_ ? ElementType::kFloat32 : b->type();
    RETURN_IF_ERROR(CheckOperandTypes(label_, a->type(), b_type));
    RETURN_IF_ERROR(CheckEpilogueType(label_, epilogue_, a->type()));
    const std::vector<int64_t> b_shape = held_ ? std::vector<int64_t>{packed_->k(), packed_->n()} : b->shape();
    ASSIGN_OR_RETURN(MatMulShape shape, PlanMatMul(label_, a->shape(), b_shape));
    ASSIGN_OR_RETURN(Tensor * c, ctx.AllocateOutputForOverwrite(0, a->type(), shape.output_shape));
    if (c->num_elements() == 0) return absl::OkStatus();
    if (held_ || UsePacked(*b)) return packed_->Run(a->data<float>(), shape.m, c->data<float>(), ctx.threads());
    return ComputeMatMul(shape, *a, *b, *c, ctx.threads());
  }

  // The prepared product stands in for B only when B is still the [K, N]
  // float32 matrix it was made from (PlanMatMul has folded A's batch into M then).
  bool UsePacked(const Tensor& b) const {
    return packed_ != nullptr && b.type() == ElementType::kFloat32 && b.rank() == 2 && b.shape()[0] == packed_->k() &&
           b.shape()[1] == packed_->n();
  }

  std::string label_;
  Tensor weights_;  // B, kept alive for packed_ when it uses B in place
  std::unique_ptr<OneDnnConstantMatMul> packed_;
  bool held_;  // packed_ holds B: the plan passes no B
  ProductEpilogue epilogue_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeMatMulKernel(const KernelInfo& info) {
  return MakeMatMulKernelWith(info, absl::StrCat("MatMul ", QuoteName(info.node_name)), ProductEpilogue());
}

absl::StatusOr<std::unique_ptr<Kernel>> MakeMatMulKernelWith(const KernelInfo& info, std::string label,
                                                             const ProductEpilogue& epilogue) {
  if (info.num_inputs() < 2 || !info.input_present[0] || !info.input_present[1])
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs A and B"));
  if (info.input_types.size() >= 2 && info.input_types[0] && info.input_types[1])
    RETURN_IF_ERROR(CheckOperandTypes(label, *info.input_types[0], *info.input_types[1]));

  std::unique_ptr<OneDnnConstantMatMul> packed;
  Tensor weights;
  const std::shared_ptr<const ConstantHolder> released =
      info.released_constants.size() >= 2 ? info.released_constants[1] : nullptr;
  if (released != nullptr) {
    ASSIGN_OR_RETURN(packed, OneDnnConstantMatMul::FromHeld(released, /*transpose_b=*/false, nullptr));
    if (packed != nullptr) return std::make_unique<MatMulKernel>(std::move(label), Tensor(), std::move(packed), true, epilogue);
  }
  const Tensor* b = info.constant_inputs.size() >= 2 ? info.constant_inputs[1] : nullptr;
  if (b != nullptr && b->type() == ElementType::kFloat32 && b->rank() == 2 && b->num_elements() > 0) {
    const bool hold = info.sole_reader.size() >= 2 && info.sole_reader[1] && PackSoleReaderWeights();
    OneDnnConstantMatMul::Options options;
    options.in_place = !hold;
    ASSIGN_OR_RETURN(packed, OneDnnConstantMatMul::Create(b->data<float>(), b->shape()[0], b->shape()[1], options));
    if (packed->in_place()) weights = *b;
    const bool held = packed->holder() != nullptr;
    return std::make_unique<MatMulKernel>(std::move(label), std::move(weights), std::move(packed), held, epilogue);
  }
  return std::make_unique<MatMulKernel>(std::move(label), std::move(weights), std::move(packed), false, epilogue);
}

}  // namespace attune
