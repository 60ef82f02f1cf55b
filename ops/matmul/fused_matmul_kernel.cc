// attune.FusedMatMul: MatMul whose B is read with its last two dims swapped
// (trans_b = 1), so MatMul(A, Transpose(B)) needs no transposed copy of B.
// A tied embedding read as the lm_head this way is stored once and never
// transposed per run. Either way the product may end in an epilogue
// (product_epilogue.h): a bias (input 2), an activation, a multiplier (input 3).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/matmul/gemm_transposed.h"
#include "ops/matmul/gemv_transposed.h"
#include "ops/matmul/kernels.h"
#include "ops/matmul/matmul_compute.h"
#include "ops/matmul/matmul_reference.h"
#include "ops/matmul/matmul_shape.h"

namespace attune {
namespace {

// B read transposed (trans_b = 1).
class FusedMatMulKernel final : public Kernel {
 public:
  FusedMatMulKernel(std::string label, ProductEpilogue epilogue) : label_(std::move(label)), epilogue_(epilogue) {}

  absl::Status Run(KernelContext& ctx) const override {
    RETURN_IF_ERROR(RunProduct(ctx));
    return FinishProduct(label_, epilogue_, ctx, kBiasInput, kMultiplierInput);
  }

 private:
  static constexpr int kBiasInput = 2;
  static constexpr int kMultiplierInput = 3;

  absl::Status RunProduct(KernelContext& ctx) const {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (a == nullptr || b == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs inputs A and B"));
    if (a->type() != b->type())
      return absl::InvalidArgumentError(absl::StrCat(label_, ": A and B must have the same element type, got ",
                                                     ElementTypeName(a->type()), " and ", ElementTypeName(b->type())));
    if (!ReferenceMatMulSupports(a->type()))
      return absl::UnimplementedError(
          absl::StrCat(label_, ": element type ", ElementTypeName(a->type()), " is not supported"));
    RETURN_IF_ERROR(CheckEpilogueType(label_, epilogue_, a->type()));
    std::vector<int64_t> b_shape = b->shape();
    if (b_shape.size() < 2)
      return absl::InvalidArgumentError(
          absl::StrCat(label_, ": trans_b needs B of rank 2 or more, got ", ShapeToString(b->shape())));
    std::swap(b_shape[b_shape.size() - 1], b_shape[b_shape.size() - 2]);
    ASSIGN_OR_RETURN(MatMulShape shape, PlanMatMul(label_, a->shape(), b_shape));
    ASSIGN_OR_RETURN(Tensor * c, ctx.AllocateOutputForOverwrite(0, a->type(), shape.output_shape));
    if (c->num_elements() == 0) return absl::OkStatus();
    if (a->type() == ElementType::kFloat32 && shape.out_batch.empty() && shape.m <= kGemvMaxRowsOfA) {
      GemvTransposed(a->data<float>(), b->data<float>(), c->data<float>(), shape.m, shape.k, shape.n, ctx.threads());
      return absl::OkStatus();
    }
    if (a->type() == ElementType::kFloat32 && shape.out_batch.empty() &&
        shape.m >= kGemmTransposedMinRows && GemmTransposedAvailable())
      return GemmTransposed(a->data<float>(), b->data<float>(), c->data<float>(), shape.m, shape.k, shape.n,
                            ctx.threads());
    return ComputeMatMul(shape, *a, *b, *c, ctx.threads(), /*trans_a=*/false, /*trans_b=*/true);
  }

  std::string label_;
  ProductEpilogue epilogue_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeFusedMatMulKernel(const KernelInfo& info) {
  std::string label = absl::StrCat("FusedMatMul '", Sv(info.node_name), "'");
  if (info.num_inputs() < 2 || info.num_inputs() > 4 || !info.input_present[0] || !info.input_present[1])
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": needs inputs A and B, and at most a bias and a multiplier"));
  ASSIGN_OR_RETURN(int64_t trans_b, info.attrs().GetInt("trans_b", 0));
  if (trans_b != 0 && trans_b != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": trans_b must be 0 or 1, got ", trans_b));
  const bool biased = info.num_inputs() >= 3 && info.input_present[2];
  const bool multiplied = info.num_inputs() == 4 && info.input_present[3];
  ASSIGN_OR_RETURN(ProductEpilogue epilogue, ReadProductEpilogue(label, info.attrs(), biased, multiplied));
  // Without trans_b it is a MatMul, whose constant B is packed once.
  if (trans_b == 0) return MakeMatMulKernelWith(info, std::move(label), epilogue);
  return std::make_unique<FusedMatMulKernel>(std::move(label), epilogue);
}

}  // namespace attune
