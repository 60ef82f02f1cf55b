#include "ops/matmul/product_epilogue.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/parallel.h"
#include "ops/elementwise/vector_math.h"

namespace attune {

absl::StatusOr<ProductEpilogue> ReadProductEpilogue(const std::string& label, const Attributes& attributes,
                                                    bool biased, bool multiplied) {
  ProductEpilogue e;
  e.biased = biased;
  e.multiplied = multiplied;
  auto activation = attributes.GetString("activation", "");
  auto approximate = attributes.GetString("activation_approximate", "none");
  auto alpha = attributes.GetFloat("activation_alpha", 1.0f);
  for (const absl::Status& s : {activation.status(), approximate.status(), alpha.status()})
    if (!s.ok()) return Annotate(s, label);
  e.alpha = *alpha;
  if (activation->empty()) {
    e.activation = ProductEpilogue::Activation::kNone;
  } else if (*activation == "Relu") {
    e.activation = ProductEpilogue::Activation::kRelu;
  } else if (*activation == "Gelu") {
    if (*approximate != "none" && *approximate != "tanh")
      return absl::InvalidArgumentError(absl::StrCat(
          label, ": activation_approximate must be \"none\" or \"tanh\", got \"", *approximate, "\""));
    e.activation = *approximate == "tanh" ? ProductEpilogue::Activation::kGeluTanh
                                         : ProductEpilogue::Activation::kGeluErf;
  } else if (*activation == "Swish") {
    if (!std::isfinite(e.alpha))
      return absl::InvalidArgumentError(absl::StrCat(label, ": activation_alpha must be finite, got ", e.alpha));
    e.activation = ProductEpilogue::Activation::kSwish;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": activation must be \"Relu\", \"Gelu\" or \"Swish\", got \"", *activation, "\""));
  }
  return e;
}

absl::Status CheckEpilogueType(const std::string& label, const ProductEpilogue& epilogue, ElementType type) {
  if (epilogue.empty() || type == ElementType::kFloat32) return absl::OkStatus();
  return absl::UnimplementedError(
      absl::StrCat(label, ": an activation or multiplier needs float32 operands, got ", ElementTypeName(type)));
}

absl::Status FinishProduct(const std::string& label, const ProductEpilogue& epilogue, KernelContext& ctx,
                           int bias_input, int multiplier_input) {
  if (epilogue.empty()) return absl::OkStatus();
  Tensor& y = *ctx.output(0);
  const int64_t cols = y.rank() == 0 ? 1 : y.shape().back();
  const Tensor* bias = epilogue.biased ? ctx.input(bias_input) : nullptr;
  const Tensor* multiplier = epilogue.multiplied ? ctx.input(multiplier_input) : nullptr;
  auto check = [&](const Tensor* operand, bool wanted, const char* what) -> absl::Status {
    if (!wanted) return absl::OkStatus();
    if (operand == nullptr) return absl::InvalidArgumentError(absl::StrCat(label, ": needs its ", what, " input"));
    if (operand->type() != ElementType::kFloat32)
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": the ", what, " must be float32, got ", ElementTypeName(operand->type())));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(check(bias, epilogue.biased, "bias"));
  RETURN_IF_ERROR(check(multiplier, epilogue.multiplied, "multiplier"));
  if (bias != nullptr) {
    const bool row = bias->rank() <= y.rank() && bias->num_elements() == cols &&
                     (bias->rank() == 0 || bias->shape().back() == cols);
    if (!row)
      return absl::InvalidArgumentError(absl::StrCat(label, ": the bias ", ShapeToString(bias->shape()),
                                                     " must be one row of the product's last dim ", cols));
  }
  if (multiplier != nullptr && multiplier->shape() != y.shape())
    return absl::InvalidArgumentError(absl::StrCat(label, ": the multiplier ", ShapeToString(multiplier->shape()),
                                                   " must have the product's shape ", ShapeToString(y.shape())));
  if (y.num_elements() == 0) return absl::OkStatus();
  RETURN_IF_ERROR(CheckEpilogueType(label, epilogue, y.type()));
  ApplyProductEpilogue(epilogue, y.data<float>(), bias != nullptr ? bias->data<float>() : nullptr,
                       multiplier != nullptr ? multiplier->data<float>() : nullptr, y.num_elements() / cols, cols,
                       ctx.threads());
  return absl::OkStatus();
}

namespace {

// The activation over one contiguous run, on this thread.
void ActivateRun(const ProductEpilogue& e, float* c, int64_t n) {
  using elementwise::VectorOp;
  const elementwise::VectorMathKernels& k = elementwise::VectorMathKernelsFor(ActiveIsa());
  switch (e.activation) {
    case ProductEpilogue::Activation::kNone: return;
    case ProductEpilogue::Activation::kRelu:
      for (int64_t i = 0; i < n; ++i) c[i] = c[i] < 0.0f ? 0.0f : c[i];  // NaN stays NaN, as Relu keeps it
      return;
    case ProductEpilogue::Activation::kGeluTanh: k.unary[static_cast<int>(VectorOp::kGeluTanh)](c, c, n); return;
    case ProductEpilogue::Activation::kGeluErf: k.unary[static_cast<int>(VectorOp::kGeluErf)](c, c, n); return;
    case ProductEpilogue::Activation::kSwish: k.swish(c, c, n, e.alpha); return;
  }
}

}  // namespace

void ApplyProductEpilogue(const ProductEpilogue& epilogue, float* c, const float* bias, const float* multiplier,
                          int64_t rows, int64_t cols, int threads) {
  if (epilogue.empty() || rows <= 0 || cols <= 0) return;
  auto apply = [&](float* run, const float* bias_row, const float* times, int64_t n) {
    if (bias_row != nullptr)
      for (int64_t i = 0; i < n; ++i) run[i] += bias_row[i];
    ActivateRun(epilogue, run, n);
    if (times != nullptr)
      for (int64_t i = 0; i < n; ++i) run[i] *= times[i];
  };
  const float* b = epilogue.biased ? bias : nullptr;
  const float* m = epilogue.multiplied ? multiplier : nullptr;
  if (b == nullptr) {
    // One run, split evenly whatever the row count (decode has one row).
    ParallelForRange(rows * cols, kCostlyOpGrain, threads, [&](int64_t first, int64_t last) {
      apply(c + first, nullptr, m != nullptr ? m + first : nullptr, last - first);
    });
    return;
  }
  ParallelForRange(rows, std::max<int64_t>(1, kCostlyOpGrain / cols), threads, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) apply(c + r * cols, b, m != nullptr ? m + r * cols : nullptr, cols);
  });
}

}  // namespace attune
