// ArgMax / ArgMin along one axis, first or last index of the extreme value.
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/reduce/numeric.h"
#include "ops/reduce/reduce_kernels.h"
#include "ops/shape/axis_util.h"

namespace attune {
namespace {

using reduce::Numeric;

struct ArgConfig {
  bool is_max, keepdims, last;
  int64_t axis;
};

// Whether candidate v replaces the current best b (ties go to the later index when `last`).
template <typename A>
inline bool Better(A v, A b, bool is_max, bool last) {
  if (is_max) return last ? v >= b : v > b;
  return last ? v <= b : v < b;
}

template <typename T>
void ArgTyped(const T* x, int64_t* y, int64_t outer, int64_t d, int64_t inner, const ArgConfig& c, int threads) {
  using A = typename Numeric<T>::Acc;
  const int nt = outer * d * inner >= (1 << 15) ? threads : 1;
  if (inner == 1) {
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t o = 0; o < outer; ++o) {
      const T* row = x + o * d;
      A best = Numeric<T>::Load(row[0]);
      int64_t at = 0;
      for (int64_t k = 1; k < d; ++k) {
        const A v = Numeric<T>::Load(row[k]);
        if (Better(v, best, c.is_max, c.last)) best = v, at = k;
      }
      y[o] = at;
    }
    return;
  }
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    std::vector<A> best(inner);
#pragma omp for schedule(static)
    for (int64_t o = 0; o < outer; ++o) {
      const T* block = x + o * d * inner;
      int64_t* at = y + o * inner;
      for (int64_t j = 0; j < inner; ++j) best[j] = Numeric<T>::Load(block[j]), at[j] = 0;
      for (int64_t k = 1; k < d; ++k)
        for (int64_t j = 0; j < inner; ++j) {
          const A v = Numeric<T>::Load(block[k * inner + j]);
          if (Better(v, best[j], c.is_max, c.last)) best[j] = v, at[j] = k;
        }
    }
  }
}

absl::Status ArgRun(const ArgConfig& c, KernelContext& ctx) {
  const char* name = c.is_max ? "ArgMax" : "ArgMin";
  ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, name, "data"));
  const int64_t rank = data->rank();
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(c.axis, rank, name));
  const int64_t d = data->shape()[axis];
  std::vector<int64_t> out_shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != axis) out_shape.push_back(data->shape()[i]);
    else if (c.keepdims) out_shape.push_back(1);
  }
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, ElementType::kInt64, out_shape));
  if (out->num_elements() == 0) return absl::OkStatus();
  if (d == 0)
    return absl::InvalidArgumentError(absl::StrCat(name, ": axis ", axis, " of input ", data->DebugString(),
                                                   " is empty"));
  const int64_t outer = DimProduct(data->shape(), 0, axis), inner = DimProduct(data->shape(), axis + 1, rank);
  const bool ok = reduce::DispatchType<float, double, Float16, BFloat16, int8_t, uint8_t, int16_t, uint16_t, int32_t,
                                       uint32_t, int64_t, uint64_t>(data->type(), [&](auto tag) {
    using T = decltype(tag);
    ArgTyped<T>(data->data<T>(), out->data<int64_t>(), outer, d, inner, c, ctx.threads());
  });
  if (!ok) return absl::InvalidArgumentError(absl::StrCat(name, ": unsupported input type ", data->DebugString()));
  return absl::OkStatus();
}

}  // namespace

ReduceKernelOr MakeArgReduceKernel(const KernelInfo& info, bool is_max) {
  ArgConfig c;
  c.is_max = is_max;
  ASSIGN_OR_RETURN(c.axis, info.attrs().GetInt("axis", 0));
  ASSIGN_OR_RETURN(const int64_t keepdims, info.attrs().GetInt("keepdims", 1));
  ASSIGN_OR_RETURN(const int64_t last, info.attrs().GetInt("select_last_index", 0));
  c.keepdims = keepdims != 0;
  c.last = last != 0;
  return MakeKernel([c](KernelContext& ctx) { return ArgRun(c, ctx); });
}

}  // namespace attune
