// ONNX Gemm: Y = alpha · A' · B' + beta · C. A constant float32 B is packed
// once (alpha folded in) and held by the kernel when it is B's only reader,
// else used in place when it is plain [K, N] with alpha 1; a constant
// row-vector C becomes the primitive's bias, so the common Linear layer is one
// call. attune.FusedGemm is the same with an epilogue (product_epilogue.h):
// an activation of Y, then Y times its input 3.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/matmul/element_access.h"
#include "ops/matmul/kernels.h"
#include "ops/matmul/matmul_compute.h"
#include "ops/matmul/matmul_reference.h"
#include "ops/matmul/onednn_matmul.h"
#include "ops/matmul/product_epilogue.h"

namespace attune {
namespace {

using matmul_internal::AccumulatorOf;
using matmul_internal::Narrow;
using matmul_internal::Widen;

struct GemmAttributes {
  float alpha = 1.0f, beta = 1.0f;
  bool trans_a = false, trans_b = false;
};

// C seen through broadcasting to [M, N]: element (i, j) is at i·row + j·col.
struct BiasView {
  int64_t row_stride = 0, col_stride = 0;
};

absl::StatusOr<BiasView> BroadcastC(const std::string& label, const std::vector<int64_t>& c, int64_t m, int64_t n) {
  auto error = [&] {
    return absl::InvalidArgumentError(absl::StrCat(label, ": C ", ShapeToString(c),
                                                   " cannot be broadcast to the output [", m, ", ", n, "]"));
  };
  if (c.size() > 2) return error();
  const int64_t rows = c.size() == 2 ? c[0] : 1;
  const int64_t cols = c.empty() ? 1 : c.back();
  if ((rows != 1 && rows != m) || (cols != 1 && cols != n)) return error();
  return BiasView{rows == 1 ? 0 : cols, cols == 1 ? 0 : 1};
}

// y = alpha · y + beta · C, in the accumulator type of T.
template <typename T>
void ApplyAlphaBeta(Tensor& y, int64_t n, float alpha, const Tensor* c, BiasView view, float beta, int threads) {
  using Acc = AccumulatorOf<T>;
  T* out = y.data<T>();
  const T* bias = c != nullptr ? c->data<T>() : nullptr;
  const int64_t m = n == 0 ? 0 : y.num_elements() / n;
  const bool integral = std::is_integral_v<T>;
  const bool plain = alpha == 1.0f && beta == 1.0f;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T& v = out[i * n + j];
      const T* cv = bias != nullptr ? bias + i * view.row_stride + j * view.col_stride : nullptr;
      if (integral && plain) {
        // Exact wrap-around integer arithmetic when no scaling is asked for.
        v = Narrow<T>(Widen(v) + (cv != nullptr ? Widen(*cv) : Acc{}));
      } else if constexpr (std::is_integral_v<T>) {
        double r = alpha * static_cast<double>(v) + (cv != nullptr ? beta * static_cast<double>(*cv) : 0.0);
        v = static_cast<T>(r);
      } else {
        Acc r = static_cast<Acc>(alpha) * Widen(v);
        if (cv != nullptr) r += static_cast<Acc>(beta) * Widen(*cv);
        v = Narrow<T>(r);
      }
    }
  }
}

absl::Status ApplyAlphaBetaTyped(Tensor& y, int64_t n, float alpha, const Tensor* c, BiasView view, float beta,
                                 int threads) {
  switch (y.type()) {
    case ElementType::kFloat32: ApplyAlphaBeta<float>(y, n, alpha, c, view, beta, threads); break;
    case ElementType::kFloat64: ApplyAlphaBeta<double>(y, n, alpha, c, view, beta, threads); break;
    case ElementType::kFloat16: ApplyAlphaBeta<Float16>(y, n, alpha, c, view, beta, threads); break;
    case ElementType::kBFloat16: ApplyAlphaBeta<BFloat16>(y, n, alpha, c, view, beta, threads); break;
    case ElementType::kInt32: ApplyAlphaBeta<int32_t>(y, n, alpha, c, view, beta, threads); break;
    case ElementType::kInt64: ApplyAlphaBeta<int64_t>(y, n, alpha, c, view, beta, threads); break;
    case ElementType::kUint32: ApplyAlphaBeta<uint32_t>(y, n, alpha, c, view, beta, threads); break;
    case ElementType::kUint64: ApplyAlphaBeta<uint64_t>(y, n, alpha, c, view, beta, threads); break;
    default: return absl::InternalError("Gemm: unexpected element type");
  }
  return absl::OkStatus();
}

class GemmKernel final : public Kernel {
 public:
  GemmKernel(std::string label, GemmAttributes attrs, bool c_required, Tensor weights,
             std::unique_ptr<OneDnnConstantMatMul> packed, bool c_folded, bool held, ProductEpilogue epilogue)
      : label_(std::move(label)), attrs_(attrs), c_required_(c_required), weights_(std::move(weights)),
        packed_(std::move(packed)), c_folded_(c_folded), held_(held), epilogue_(epilogue) {}

  absl::Status Run(KernelContext& ctx) const override {
    if (const Tensor* a = ctx.input(0)) RETURN_IF_ERROR(CheckEpilogueType(label_, epilogue_, a->type()));
    RETURN_IF_ERROR(RunProduct(ctx));
    return FinishProduct(label_, epilogue_, ctx, /*bias_input=*/-1, kMultiplierInput);
  }

  std::shared_ptr<const ConstantHolder> HeldInput(int i) const override {
    return held_ && i == 1 ? packed_->holder() : nullptr;
  }

 private:
  static constexpr int kMultiplierInput = 3;

  absl::Status RunProduct(KernelContext& ctx) const {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    const Tensor* c = ctx.input(2);
    if (a == nullptr || (b == nullptr && !held_))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs inputs A and B"));
    if (c == nullptr && c_required_)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input C is required before opset 11"));
    const ElementType b_type = held_ ? ElementType::kFloat32 : b->type();
    if (a->type() != b_type || (c != nullptr && c->type() != a->type()))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": A, B and C must share one element type, got ",
                                                     ElementTypeName(a->type()), ", ", ElementTypeName(b_type),
                                                     c != nullptr ? absl::StrCat(", ", ElementTypeName(c->type())) : ""));
    if (!ReferenceMatMulSupports(a->type()))
      return absl::UnimplementedError(
          absl::StrCat(label_, ": element type ", ElementTypeName(a->type()), " is not supported"));
    const std::vector<int64_t> b_shape =
        !held_ ? b->shape()
               : attrs_.trans_b ? std::vector<int64_t>{packed_->n(), packed_->k()}
                                : std::vector<int64_t>{packed_->k(), packed_->n()};
    if (a->rank() != 2 || b_shape.size() != 2)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": A and B must be 2-D, got A ",
                                                     ShapeToString(a->shape()), " and B ", ShapeToString(b_shape)));
    const int64_t m = attrs_.trans_a ? a->shape()[1] : a->shape()[0];
    const int64_t k = attrs_.trans_a ? a->shape()[0] : a->shape()[1];
    const int64_t kb = attrs_.trans_b ? b_shape[1] : b_shape[0];
    const int64_t n = attrs_.trans_b ? b_shape[0] : b_shape[1];
    if (k != kb)
      return absl::InvalidArgumentError(absl::StrCat(
          label_, ": inner dimensions do not match: A ", ShapeToString(a->shape()), (attrs_.trans_a ? " (transposed)" : ""),
          " has K=", k, ", B ", ShapeToString(b_shape), (attrs_.trans_b ? " (transposed)" : ""), " has K=", kb));
    BiasView view;
    if (c != nullptr) {
      ASSIGN_OR_RETURN(view, BroadcastC(label_, c->shape(), m, n));
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, a->type(), {m, n}));
    if (y->num_elements() == 0) return absl::OkStatus();
    const int threads = ctx.threads();

    if (held_ || UsePacked(*b, k, n)) {
      const float* rows = a->data<float>();
      Tensor transposed;
      if (attrs_.trans_a) {
        ASSIGN_OR_RETURN(transposed, ctx.AllocateScratch(ElementType::kFloat32, {m, k}));
        float* t = transposed.data<float>();
        for (int64_t i = 0; i < m; ++i)
          for (int64_t kk = 0; kk < k; ++kk) t[i * k + kk] = rows[kk * m + i];
        rows = t;
      }
      RETURN_IF_ERROR(packed_->Run(rows, m, y->data<float>(), threads));
      if (c == nullptr || c_folded_ || attrs_.beta == 0.0f) return absl::OkStatus();
      return ApplyAlphaBetaTyped(*y, n, 1.0f, c, view, attrs_.beta, threads);
    }

    MatMulShape shape;
    shape.m = m;
    shape.k = k;
    shape.n = n;
    shape.output_shape = {m, n};
    RETURN_IF_ERROR(ComputeMatMul(shape, *a, *b, *y, threads, attrs_.trans_a, attrs_.trans_b));
    const bool add_c = c != nullptr && attrs_.beta != 0.0f;
    if (attrs_.alpha == 1.0f && !add_c) return absl::OkStatus();
    return ApplyAlphaBetaTyped(*y, n, attrs_.alpha, add_c ? c : nullptr, view, attrs_.beta, threads);
  }

  bool UsePacked(const Tensor& b, int64_t k, int64_t n) const {
    return packed_ != nullptr && b.type() == ElementType::kFloat32 && packed_->k() == k && packed_->n() == n;
  }

  std::string label_;
  GemmAttributes attrs_;
  bool c_required_;
  Tensor weights_;  // B, kept alive for packed_ when it uses B in place
  std::unique_ptr<OneDnnConstantMatMul> packed_;
  bool c_folded_;  // beta · C is the packed primitive's bias
  bool held_;      // packed_ holds B: the plan passes no B
  ProductEpilogue epilogue_;
};

absl::StatusOr<GemmAttributes> ReadAttributes(const std::string& label, const Attributes& attrs) {
  GemmAttributes g;
  ASSIGN_OR_RETURN(g.alpha, attrs.GetFloat("alpha", 1.0f));
  ASSIGN_OR_RETURN(g.beta, attrs.GetFloat("beta", 1.0f));
  ASSIGN_OR_RETURN(int64_t trans_a, attrs.GetInt("transA", 0));
  ASSIGN_OR_RETURN(int64_t trans_b, attrs.GetInt("transB", 0));
  g.trans_a = trans_a != 0;
  g.trans_b = trans_b != 0;
  if (attrs.Has("broadcast"))
    return absl::UnimplementedError(absl::StrCat(label, ": attribute 'broadcast' (Gemm before opset 7) is not supported"));
  return g;
}

// beta · C as an [N] bias row when C is a constant that does not vary over rows.
std::optional<std::vector<float>> FoldableBias(const Tensor* c, float beta, int64_t n) {
  if (c == nullptr || c->type() != ElementType::kFloat32 || c->rank() > 2) return std::nullopt;
  if (c->rank() == 2 && c->shape()[0] != 1) return std::nullopt;
  const int64_t cols = c->rank() == 0 ? 1 : c->shape().back();
  if (cols != 1 && cols != n) return std::nullopt;
  std::vector<float> bias(n);
  for (int64_t j = 0; j < n; ++j) bias[j] = beta * c->data<float>()[cols == 1 ? 0 : j];
  return bias;
}

absl::StatusOr<std::unique_ptr<Kernel>> MakeGemmKernelWith(const KernelInfo& info, bool c_required, std::string label,
                                                           ProductEpilogue epilogue) {
  if (info.num_inputs() < 2 || !info.input_present[0] || !info.input_present[1])
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs A and B"));
  const bool has_c = info.num_inputs() >= 3 && info.input_present[2];
  if (c_required && !has_c)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input C is required before opset 11"));
  ASSIGN_OR_RETURN(GemmAttributes attrs, ReadAttributes(label, info.attrs()));

  std::unique_ptr<OneDnnConstantMatMul> packed;
  Tensor weights;
  bool c_folded = false;
  bool held = false;
  const Tensor* c = has_c && info.constant_inputs.size() >= 3 ? info.constant_inputs[2] : nullptr;
  const std::shared_ptr<const ConstantHolder> released =
      info.released_constants.size() >= 2 ? info.released_constants[1] : nullptr;
  const Tensor* b = info.constant_inputs.size() >= 2 ? info.constant_inputs[1] : nullptr;
  if (released != nullptr && attrs.alpha == 1.0f) {
    ASSIGN_OR_RETURN(packed, OneDnnConstantMatMul::FromHeld(released, attrs.trans_b, nullptr));
    if (packed != nullptr) {
      std::optional<std::vector<float>> bias = FoldableBias(c, attrs.beta, packed->n());
      if (bias) {
        ASSIGN_OR_RETURN(packed, OneDnnConstantMatMul::FromHeld(released, attrs.trans_b, bias->data()));
      }
      c_folded = bias.has_value();
      held = true;
    }
  } else if (b != nullptr && b->type() == ElementType::kFloat32 && b->rank() == 2 && b->num_elements() > 0) {
    const int64_t k = attrs.trans_b ? b->shape()[1] : b->shape()[0];
    const int64_t n = attrs.trans_b ? b->shape()[0] : b->shape()[1];
    std::optional<std::vector<float>> bias = FoldableBias(c, attrs.beta, n);
    OneDnnConstantMatMul::Options options;
    options.transpose_b = attrs.trans_b;
    options.alpha = attrs.alpha;
    options.bias = bias ? bias->data() : nullptr;
    options.in_place = !(info.sole_reader.size() >= 2 && info.sole_reader[1] && PackSoleReaderWeights());
    ASSIGN_OR_RETURN(packed, OneDnnConstantMatMul::Create(b->data<float>(), k, n, options));
    if (packed->in_place()) weights = *b;
    c_folded = bias.has_value();
    held = packed->holder() != nullptr && info.sole_reader.size() >= 2 && info.sole_reader[1];
  }
  return std::make_unique<GemmKernel>(std::move(label), attrs, c_required, std::move(weights), std::move(packed),
                                      c_folded, held, epilogue);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeGemmKernel(const KernelInfo& info, bool c_required) {
  return MakeGemmKernelWith(info, c_required, absl::StrCat("Gemm ", QuoteName(info.node_name)), ProductEpilogue());
}

absl::StatusOr<std::unique_ptr<Kernel>> MakeFusedGemmKernel(const KernelInfo& info) {
  std::string label = absl::StrCat("FusedGemm ", QuoteName(info.node_name));
  if (info.num_inputs() > 4)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes at most 4 inputs (A, B, C, multiplier), got ",
                                                   info.num_inputs()));
  const bool multiplied = info.num_inputs() == 4 && info.input_present[3];
  // C is the bias, added with the product (beta · C).
  ASSIGN_OR_RETURN(ProductEpilogue epilogue, ReadProductEpilogue(label, info.attrs(), /*biased=*/false, multiplied));
  return MakeGemmKernelWith(info, /*c_required=*/false, std::move(label), epilogue);
}

}  // namespace attune
