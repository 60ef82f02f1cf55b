// LpNormalization: X divided by its L1 or L2 norm along one axis; a line
// whose norm is 0 gives zeros (as ONNX's reference and ONNX Runtime do).
// Norms are accumulated in double.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
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

}  // namespace

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
