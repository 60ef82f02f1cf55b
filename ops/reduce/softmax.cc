// Softmax and LogSoftmax. Opset 13+: along one axis. Before 13: the input is
// viewed as 2-D [prod(dims before axis), prod(dims from axis)] and each row normalised.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/reduce/fast_exp.h"
#include "ops/reduce/numeric.h"
#include "ops/reduce/reduce_kernels.h"
#include "ops/reduce/softmax_row.h"
#include "ops/shape/axis_util.h"

namespace attune {
namespace {

using reduce::Numeric;

inline float Exp(float x) { return reduce::FastExp(x); }
inline double Exp(double x) { return std::exp(x); }

// One contiguous row: max, exp(x - max) and its sum, then scale or subtract the log.
// float rows go to the per-ISA kernel; this generic version serves double.
template <typename C>
void SoftmaxRow(const C* x, C* y, int64_t n, bool log) {
  if constexpr (std::is_same_v<C, float>) {
    reduce::SelectedSoftmaxRow()(x, y, n, log);
    return;
  }
  constexpr int kLanes = 16;
  C part[kLanes];
  std::fill_n(part, kLanes, -std::numeric_limits<C>::infinity());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] = std::max(part[l], x[i + l]);
  C m = -std::numeric_limits<C>::infinity();
  for (; i < n; ++i) m = std::max(m, x[i]);
  for (int l = 0; l < kLanes; ++l) m = std::max(m, part[l]);
  for (i = 0; i < n; ++i) y[i] = Exp(x[i] - m);
  std::fill_n(part, kLanes, C(0));
  for (i = 0; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] += y[i + l];
  C sum = 0;
  for (; i < n; ++i) sum += y[i];
  for (int l = 0; l < kLanes; ++l) sum += part[l];
  if (log) {
    // (x - m) - log(sum), not x - (m + log(sum)): m may be large enough to swamp the log.
    const C log_sum = std::log(sum);
    for (i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;
  } else {
    const C inv = C(1) / sum;
    for (i = 0; i < n; ++i) y[i] *= inv;
  }
}

// `len` columns of a [d, stride] block (the axis is not the last dim): each column is one softmax.
template <typename C>
void SoftmaxColumns(const C* x, C* y, int64_t d, int64_t stride, int64_t len, bool log, C* m, C* sum) {
  std::fill_n(m, len, -std::numeric_limits<C>::infinity());
  std::fill_n(sum, len, C(0));
  for (int64_t k = 0; k < d; ++k)
    for (int64_t j = 0; j < len; ++j) m[j] = std::max(m[j], x[k * stride + j]);
  for (int64_t k = 0; k < d; ++k)
    for (int64_t j = 0; j < len; ++j) {
      const C e = Exp(x[k * stride + j] - m[j]);
      y[k * stride + j] = e;
      sum[j] += e;
    }
  if (log) {
    for (int64_t j = 0; j < len; ++j) sum[j] = std::log(sum[j]);
    for (int64_t k = 0; k < d; ++k)
      for (int64_t j = 0; j < len; ++j) y[k * stride + j] = (x[k * stride + j] - m[j]) - sum[j];
  } else {
    for (int64_t j = 0; j < len; ++j) sum[j] = C(1) / sum[j];
    for (int64_t k = 0; k < d; ++k)
      for (int64_t j = 0; j < len; ++j) y[k * stride + j] *= sum[j];
  }
}

// [outer, d, inner] with the softmax along d. T is stored, C computed in
// (float for half types: rows are converted through per-thread scratch).
template <typename T>
void SoftmaxTyped(const T* x, T* y, int64_t outer, int64_t d, int64_t inner, bool log, int threads) {
  using C = typename Numeric<T>::Acc;
  constexpr bool kDirect = std::is_same_v<T, C>;
  constexpr int64_t kBlock = 64;  // columns per task when the axis is not last
  const int64_t blocks = inner == 1 ? 1 : (inner + kBlock - 1) / kBlock;
  const int64_t tasks = outer * blocks;
  const int nt = tasks > 1 && outer * d * inner >= (1 << 14) ? threads : 1;
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    const int64_t cols = inner == 1 ? 1 : kBlock;
    std::vector<C> xs(kDirect ? 0 : d * cols), ys(kDirect ? 0 : d * cols), m(cols), s(cols);
#pragma omp for schedule(static)
    for (int64_t w = 0; w < tasks; ++w) {
      const int64_t o = w / blocks, j0 = (w % blocks) * kBlock;
      const int64_t len = inner == 1 ? 1 : std::min(kBlock, inner - j0);
      const T* xb = x + o * d * inner + (inner == 1 ? 0 : j0);
      T* yb = y + o * d * inner + (inner == 1 ? 0 : j0);
      if constexpr (kDirect) {
        if (inner == 1) SoftmaxRow<C>(xb, yb, d, log);
        else SoftmaxColumns<C>(xb, yb, d, inner, len, log, m.data(), s.data());
      } else {
        // Compact the block to [d, len] floats, compute, write back.
        for (int64_t k = 0; k < d; ++k)
          for (int64_t j = 0; j < len; ++j) xs[k * len + j] = Numeric<T>::Load(xb[k * inner + j]);
        if (inner == 1) SoftmaxRow<C>(xs.data(), ys.data(), d, log);
        else SoftmaxColumns<C>(xs.data(), ys.data(), d, len, len, log, m.data(), s.data());
        for (int64_t k = 0; k < d; ++k)
          for (int64_t j = 0; j < len; ++j) yb[k * inner + j] = Numeric<T>::Store(ys[k * len + j]);
      }
    }
  }
}

absl::Status SoftmaxRun(KernelContext& ctx, int64_t axis_attr, bool coerce_2d, bool log) {
  const char* name = log ? "LogSoftmax" : "Softmax";
  ASSIGN_OR_RETURN(const Tensor* input, RequiredInput(ctx, 0, name, "input"));
  const int64_t rank = input->rank();
  // A scalar is treated as a one-element vector.
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_attr, std::max<int64_t>(rank, 1), name));
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, input->type(), input->shape()));
  if (out->num_elements() == 0) return absl::OkStatus();
  const std::vector<int64_t> shape = rank == 0 ? std::vector<int64_t>{1} : input->shape();
  const int64_t outer = DimProduct(shape, 0, axis);
  const int64_t d = coerce_2d ? DimProduct(shape, axis, static_cast<int64_t>(shape.size())) : shape[axis];
  const int64_t inner = coerce_2d ? 1 : DimProduct(shape, axis + 1, static_cast<int64_t>(shape.size()));
  const bool ok = reduce::DispatchType<float, double, Float16, BFloat16>(input->type(), [&](auto tag) {
    using T = decltype(tag);
    SoftmaxTyped<T>(input->data<T>(), out->data<T>(), outer, d, inner, log, ctx.threads());
  });
  if (!ok) return absl::InvalidArgumentError(absl::StrCat(name, ": unsupported input type ", input->DebugString()));
  return absl::OkStatus();
}

}  // namespace

ReduceKernelOr MakeSoftmaxKernel(const KernelInfo& info, bool log) {
  const bool coerce_2d = info.opset < 13;
  ASSIGN_OR_RETURN(const int64_t axis, info.attrs().GetInt("axis", coerce_2d ? 1 : -1));
  return MakeKernel([axis, coerce_2d, log](KernelContext& ctx) { return SoftmaxRun(ctx, axis, coerce_2d, log); });
}

}  // namespace attune
