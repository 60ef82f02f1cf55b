// ONNX MatMul. A constant float32 matrix B is used in place through one
// prepared product (oneDNN, or the panel GEMV for a few rows); everything else
// is planned per call (shapes may change between calls).
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

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(std::string label, Tensor weights, std::unique_ptr<OneDnnConstantMatMul> packed)
      : label_(std::move(label)), weights_(std::move(weights)), packed_(std::move(packed)) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (a == nullptr || b == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs inputs A and B"));
    RETURN_IF_ERROR(CheckOperandTypes(label_, a->type(), b->type()));
    ASSIGN_OR_RETURN(MatMulShape shape, PlanMatMul(label_, a->shape(), b->shape()));
    ASSIGN_OR_RETURN(Tensor * c, ctx.AllocateOutputForOverwrite(0, a->type(), shape.output_shape));
    if (c->num_elements() == 0) return absl::OkStatus();
    if (UsePacked(*b)) return packed_->Run(a->data<float>(), shape.m, c->data<float>(), ctx.threads());
    return ComputeMatMul(shape, *a, *b, *c, ctx.threads());
  }

 private:
  // The packed weights stand in for B only when B is still the [K, N] float32
  // matrix they were made from (PlanMatMul has folded A's batch into M then).
  bool UsePacked(const Tensor& b) const {
    return packed_ != nullptr && b.type() == ElementType::kFloat32 && b.rank() == 2 && b.shape()[0] == packed_->k() &&
           b.shape()[1] == packed_->n();
  }

  std::string label_;
  Tensor weights_;  // B, kept alive for packed_ when it uses B in place
  std::unique_ptr<OneDnnConstantMatMul> packed_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeMatMulKernel(const KernelInfo& info) {
  std::string label = absl::StrCat("MatMul ", QuoteName(info.node_name));
  if (info.num_inputs() < 2 || !info.input_present[0] || !info.input_present[1])
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs A and B"));
  if (info.input_types.size() >= 2 && info.input_types[0] && info.input_types[1])
    RETURN_IF_ERROR(CheckOperandTypes(label, *info.input_types[0], *info.input_types[1]));

  std::unique_ptr<OneDnnConstantMatMul> packed;
  Tensor weights;
  const Tensor* b = info.constant_inputs.size() >= 2 ? info.constant_inputs[1] : nullptr;
  if (b != nullptr && b->type() == ElementType::kFloat32 && b->rank() == 2 && b->num_elements() > 0) {
    OneDnnConstantMatMul::Options options;
    options.in_place = true;
    ASSIGN_OR_RETURN(packed, OneDnnConstantMatMul::Create(b->data<float>(), b->shape()[0], b->shape()[1], options));
    if (packed->in_place()) weights = *b;
  }
  return std::make_unique<MatMulKernel>(std::move(label), std::move(weights), std::move(packed));
}

}  // namespace attune
