// LpNormalization: X divided by its L1 or L2 norm along one axis; a line
// whose norm is 0 gives zeros (as ONNX's reference and ONNX Runtime do).
// LRN: X divided by (bias + alpha / size * the sum of squares over `size`
// neighbouring channels)^beta. Sums are accumulated in double.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/common/input_checks.h"
#include "ops/common/numeric.h"
#include "ops/common/parallel.h"
#include "ops/common/type_dispatch.h"
#include "ops/norm/kernels.h"

namespace attune {
namespace {

class LpNormalizationKernel final : public Kernel {
 public:
  LpNormalizationKernel(std::string label, int64_t axis, int64_t p) : label_(std::move(label)), axis_(axis), p_(p) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs input X"));
    const std::vector<int64_t>& shape = x->shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (axis_ < -rank || axis_ >= rank || rank == 0)
      return absl::InvalidArgumentError(
          absl::StrCat(label_, ": attribute 'axis' ", axis_, " is out of range for input X ", ShapeToString(shape)));
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= shape[i];
    for (int64_t i = axis + 1; i < rank; ++i) inner *= shape[i];
    const int64_t len = shape[axis];
    return VisitType(FloatTypes{}, x->type(), absl::StrCat(label_, ": input X"), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), shape));
      const StorageOf<T>* in = x->data<StorageOf<T>>();
      StorageOf<T>* out = y->data<StorageOf<T>>();
      ParallelForRange(outer * inner, std::max<int64_t>(1, kCheapOpGrain / std::max<int64_t>(len, 1)), ctx.threads(),
                       [&](int64_t begin, int64_t end) {
                         for (int64_t line = begin; line < end; ++line) {
                           const int64_t base = (line / inner) * len * inner + line % inner;
                           double norm = 0;
                           for (int64_t k = 0; k < len; ++k) {
                             const double v = static_cast<double>(Arith<T>::Load(in[base + k * inner]));
                             norm += p_ == 1 ? std::fabs(v) : v * v;
                           }
                           if (p_ == 2) norm = std::sqrt(norm);
                           const double inv = norm == 0 ? 0.0 : 1.0 / norm;
                           for (int64_t k = 0; k < len; ++k)
                             out[base + k * inner] = Arith<T>::Store(static_cast<ComputeOf<T>>(
                                 static_cast<double>(Arith<T>::Load(in[base + k * inner])) * inv));
                         }
                       });
      return absl::OkStatus();
    });
  }

 private:
  std::string label_;
  int64_t axis_, p_;
};

class LrnKernel final : public Kernel {
 public:
  LrnKernel(std::string label, double alpha, double beta, double bias, int64_t size)
      : label_(std::move(label)), alpha_(alpha), beta_(beta), bias_(bias), size_(size) {}

  absl::Status Run(KernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, ChannelsFirstInput(ctx, label_));
    const std::vector<int64_t>& s = x->shape();
    const int64_t n = s[0], c = s[1];
    const int64_t plane = n * c == 0 ? 0 : x->num_elements() / (n * c);
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    return VisitType(FloatTypes{}, x->type(), absl::StrCat(label_, ": input X"), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), s));
      const StorageOf<T>* in = x->data<StorageOf<T>>();
      StorageOf<T>* out = y->data<StorageOf<T>>();
      for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t i = 0; i < plane; ++i) {
            double sum = 0;
            for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(c - 1, ch + after); ++k) {
              const double v = static_cast<double>(Arith<T>::Load(in[(b * c + k) * plane + i]));
              sum += v * v;
            }
            const int64_t at = (b * c + ch) * plane + i;
            const double v = static_cast<double>(Arith<T>::Load(in[at]));
            out[at] = Arith<T>::Store(static_cast<ComputeOf<T>>(
                v / std::pow(bias_ + alpha_ / static_cast<double>(size_) * sum, beta_)));
          }
      return absl::OkStatus();
    });
  }

 private:
  std::string label_;
  double alpha_, beta_, bias_;
  int64_t size_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeLrnKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() != 1 || !info.input_present[0] || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes one input and gives one output"));
  ASSIGN_OR_RETURN(float alpha, info.attrs().GetFloat("alpha", 1e-4f));
  ASSIGN_OR_RETURN(float beta, info.attrs().GetFloat("beta", 0.75f));
  ASSIGN_OR_RETURN(float bias, info.attrs().GetFloat("bias", 1.0f));
  ASSIGN_OR_RETURN(int64_t size, info.attrs().GetInt("size"));
  if (size < 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'size' is ", size, "; it must be positive"));
  return std::make_unique<LrnKernel>(std::move(label), alpha, beta, bias, size);
}

absl::StatusOr<std::unique_ptr<Kernel>> MakeLpNormalizationKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() != 1 || !info.input_present[0] || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes one input and gives one output"));
  ASSIGN_OR_RETURN(int64_t axis, info.attrs().GetInt("axis", -1));
  ASSIGN_OR_RETURN(int64_t p, info.attrs().GetInt("p", 2));
  if (p != 1 && p != 2)
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'p' is ", p, "; it must be 1 or 2"));
  return std::make_unique<LpNormalizationKernel>(std::move(label), axis, p);
}

}  // namespace attune
