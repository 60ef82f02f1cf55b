// MeanVarianceNormalization (opset 9/13): y = (x - mean) / (sqrt(var) + 1e-9)
// with mean and variance (E[x^2] - mean^2, as ONNX's function body) taken
// over `axes` (default 0, 2, 3), in double.
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/type_dispatch.h"
#include "ops/norm/channel_norms.h"

namespace attune {
namespace {

absl::Status RunMvn(KernelContext& ctx, const std::string& label, const std::vector<int64_t>& axes) {
  const Tensor* x = ctx.input(0);
  if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label, ": input 0 is required"));
  const auto& shape = x->shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    const int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank)
      return absl::InvalidArgumentError(absl::StrCat(label, ": axis ", a, " is out of range for input 0 of shape ",
                                                     ShapeToString(shape)));
    reduced[axis] = true;
  }
  // Each element's group: its index with the reduced axes set to 0.
  const int64_t count = x->num_elements();
  std::vector<int64_t> group(static_cast<size_t>(count));
  int64_t groups = 1, group_size = 1;
  for (int64_t d = 0; d < rank; ++d) (reduced[d] ? group_size : groups) *= shape[d];
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, g = 0, stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t coord = rest % shape[d];
      rest /= shape[d];
      if (!reduced[d]) {
        g += coord * stride;
        stride *= shape[d];
      }
    }
    group[i] = g;
  }
  return VisitType(FloatTypes{}, x->type(), label + ": input 0", [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, x->type(), shape));
    const auto* in = x->data<StorageOf<T>>();
    std::vector<double> sum(groups, 0), square_sum(groups, 0);
    for (int64_t i = 0; i < count; ++i) {
      const double v = Arith<T>::Load(in[i]);
      sum[group[i]] += v;
      square_sum[group[i]] += v * v;
    }
    for (int64_t i = 0; i < count; ++i) {
      const double mean = sum[group[i]] / group_size;
      const double variance = square_sum[group[i]] / group_size - mean * mean;
      const double y = (Arith<T>::Load(in[i]) - mean) / (std::sqrt(variance) + 1e-9);
      out->data<StorageOf<T>>()[i] = Arith<T>::Store(static_cast<ComputeOf<T>>(y));
    }
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeMeanVarianceNormalizationKernel(const KernelInfo& info) {
  const std::string label = NodeLabel(info);
  auto axes = info.attrs().GetInts("axes", {0, 2, 3});
  if (!axes.ok()) return absl::InvalidArgumentError(absl::StrCat(label, ": ", axes.status().message()));
  return MakeKernel([label, axes = *axes](KernelContext& ctx) { return RunMvn(ctx, label, axes); });
}

}  // namespace attune
