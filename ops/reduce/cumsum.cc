// CumSum and CumProd along one axis, optionally exclusive and/or reversed.
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/reduce/numeric.h"
#include "ops/reduce/reduce_kernels.h"
#include "ops/shape/axis_util.h"

namespace attune {
namespace {

using reduce::Numeric;

template <typename T, bool kProduct>
void CumSumTyped(const T* x, T* y, int64_t outer, int64_t d, int64_t inner, bool exclusive, bool reverse,
                 int threads) {
  using A = typename Numeric<T>::Acc;
  const int nt = outer > 1 && outer * d * inner >= (1 << 15) ? threads : 1;
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    std::vector<A> acc(inner);
#pragma omp for schedule(static)
    for (int64_t o = 0; o < outer; ++o) {
      std::fill(acc.begin(), acc.end(), A(kProduct ? 1 : 0));
      for (int64_t step = 0; step < d; ++step) {
        const int64_t k = reverse ? d - 1 - step : step;
        const T* xr = x + (o * d + k) * inner;
        T* yr = y + (o * d + k) * inner;
        for (int64_t j = 0; j < inner; ++j) {
          const A v = Numeric<T>::Load(xr[j]);
          if (exclusive) {
            yr[j] = Numeric<T>::Store(acc[j]);
            acc[j] = kProduct ? reduce::WrapMul(acc[j], v) : reduce::WrapAdd(acc[j], v);
          } else {
            acc[j] = kProduct ? reduce::WrapMul(acc[j], v) : reduce::WrapAdd(acc[j], v);
            yr[j] = Numeric<T>::Store(acc[j]);
          }
        }
      }
    }
  }
}

template <bool kProduct>
ReduceKernelOr MakeCumulativeKernel(const KernelInfo& info) {
  const char* op = kProduct ? "CumProd" : "CumSum";
  ASSIGN_OR_RETURN(const int64_t exclusive, info.attrs().GetInt("exclusive", 0));
  ASSIGN_OR_RETURN(const int64_t reverse, info.attrs().GetInt("reverse", 0));
  return MakeKernel([exclusive, reverse, op](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, op, "x"));
    ASSIGN_OR_RETURN(const Tensor* axis_t, RequiredInput(ctx, 1, op, "axis"));
    ASSIGN_OR_RETURN(const int64_t axis_v,
                     ReadIndexScalar(*axis_t, absl::StrCat(op, ": input 'axis'"), IndexTypes::kInt32OrInt64));
    const int64_t rank = x->rank();
    ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_v, rank, op));
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x->type(), x->shape()));
    if (out->num_elements() == 0) return absl::OkStatus();
    const int64_t outer = DimProduct(x->shape(), 0, axis), d = x->shape()[axis];
    const int64_t inner = DimProduct(x->shape(), axis + 1, rank);
    const bool ok = reduce::DispatchType<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>(
        x->type(), [&](auto tag) {
          using T = decltype(tag);
          CumSumTyped<T, kProduct>(x->data<T>(), out->data<T>(), outer, d, inner, exclusive != 0, reverse != 0, ctx.threads());
        });
    if (!ok) return absl::InvalidArgumentError(absl::StrCat(op, ": unsupported input type ", x->DebugString()));
    return absl::OkStatus();
  });
}

}  // namespace

ReduceKernelOr MakeCumSumKernel(const KernelInfo& info) { return MakeCumulativeKernel<false>(info); }
ReduceKernelOr MakeCumProdKernel(const KernelInfo& info) { return MakeCumulativeKernel<true>(info); }

}  // namespace attune
