// Det (opset 11): the determinant of each [M, M] matrix of an [..., M, M]
// input, by LU decomposition with partial pivoting in double precision.
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/type_dispatch.h"
#include "ops/matmul/det.h"

namespace attune {
namespace {

// Determinant of the m x m row-major matrix `a` (overwritten).
double Determinant(std::vector<double>& a, int64_t m) {
  double det = 1;
  for (int64_t k = 0; k < m; ++k) {
    int64_t pivot = k;
    for (int64_t r = k + 1; r < m; ++r)
      if (std::fabs(a[r * m + k]) > std::fabs(a[pivot * m + k])) pivot = r;
    if (a[pivot * m + k] == 0) return 0;
    if (pivot != k) {
      for (int64_t c = 0; c < m; ++c) std::swap(a[k * m + c], a[pivot * m + c]);
      det = -det;
    }
    det *= a[k * m + k];
    for (int64_t r = k + 1; r < m; ++r) {
      const double f = a[r * m + k] / a[k * m + k];
      for (int64_t c = k + 1; c < m; ++c) a[r * m + c] -= f * a[k * m + c];
    }
  }
  return det;
}

absl::Status RunDet(KernelContext& ctx, const std::string& label) {
  const Tensor* x = ctx.input(0);
  if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label, ": input 0 is required"));
  const auto& shape = x->shape();
  const size_t rank = shape.size();
  if (rank < 2 || shape[rank - 1] != shape[rank - 2])
    return absl::InvalidArgumentError(absl::StrCat(label, ": input 0 has shape ", ShapeToString(shape),
                                                   "; expected [..., M, M]"));
  const int64_t m = shape[rank - 1];
  const std::vector<int64_t> out_shape(shape.begin(), shape.end() - 2);
  return VisitType(FloatTypes{}, x->type(), label + ": input 0", [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, x->type(), out_shape));
    const int64_t batch = out->num_elements();
    std::vector<double> a(static_cast<size_t>(m * m));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < m * m; ++i) a[i] = Arith<T>::Load(x->data<StorageOf<T>>()[b * m * m + i]);
      out->data<StorageOf<T>>()[b] = Arith<T>::Store(static_cast<ComputeOf<T>>(Determinant(a, m)));
    }
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeDetKernel(const KernelInfo& info) {
  return MakeKernel([label = NodeLabel(info)](KernelContext& ctx) { return RunDet(ctx, label); });
}

}  // namespace attune
