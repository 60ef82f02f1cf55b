// GlobalMaxPool, GlobalAveragePool and GlobalLpPool: one window over all
// spatial axes of each (n, c) plane; Y is [N, C, 1, ...]. The sums run in
// eight lanes so that the compiler vectorises them; float16 and bfloat16
// compute in float, float64 in double.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/input_checks.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/parallel.h"
#include "ops/common/type_dispatch.h"
#include "ops/pool/kernels.h"
#include "ops/pool/pool_params.h"

namespace attune {
namespace {

template <typename T>
ComputeOf<T> ReducePlane(PoolKind kind, double p, const StorageOf<T>* x, int64_t n) {
  using C = ComputeOf<T>;
  using Acc = std::conditional_t<std::is_same_v<C, double>, double, float>;
  if (kind == PoolKind::kMax) {
    C best = -std::numeric_limits<C>::infinity();
    bool nan = false;
    for (int64_t i = 0; i < n; ++i) {
      const C v = Arith<T>::Load(x[i]);
      nan |= std::isnan(v);
      best = v > best ? v : best;
    }
    return nan ? std::numeric_limits<C>::quiet_NaN() : best;
  }
  constexpr int kLanes = 8;
  Acc lanes[kLanes] = {};
  int64_t i = 0;
  if (kind == PoolKind::kAverage) {
    for (; i + kLanes <= n; i += kLanes)
      for (int l = 0; l < kLanes; ++l) lanes[l] += static_cast<Acc>(Arith<T>::Load(x[i + l]));
    for (; i < n; ++i) lanes[0] += static_cast<Acc>(Arith<T>::Load(x[i]));
  } else if (p == 2) {
    for (; i + kLanes <= n; i += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const Acc v = static_cast<Acc>(Arith<T>::Load(x[i + l]));
        lanes[l] += v * v;
      }
    for (; i < n; ++i) {
      const Acc v = static_cast<Acc>(Arith<T>::Load(x[i]));
      lanes[0] += v * v;
    }
  } else {
    for (; i < n; ++i) lanes[0] += static_cast<Acc>(std::pow(std::fabs(double{Arith<T>::Load(x[i])}), p));
  }
  Acc sum = 0;
  for (Acc l : lanes) sum += l;
  if (kind == PoolKind::kAverage) return static_cast<C>(sum / static_cast<Acc>(n));
  return static_cast<C>(p == 2 ? std::sqrt(double{sum}) : std::pow(double{sum}, 1.0 / p));
}

class GlobalPoolKernel final : public Kernel {
 public:
  GlobalPoolKernel(std::string label, PoolKind kind, double p) : label_(std::move(label)), kind_(kind), p_(p) {}

  absl::Status Run(KernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, ChannelsFirstInput(ctx, label_));
    const std::vector<int64_t>& shape = x->shape();
    std::vector<int64_t> out_shape(shape.size(), 1);
    out_shape[0] = shape[0];
    out_shape[1] = shape[1];
    const int64_t planes = shape[0] * shape[1];
    const int64_t plane = planes == 0 ? 0 : x->num_elements() / planes;
    if (plane == 0 && planes > 0)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input X ", ShapeToString(shape),
                                                     " has an empty spatial axis; there is nothing to pool"));
    return VisitType(FloatTypes{}, x->type(), absl::StrCat(label_, ": input X"), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), out_shape));
      const StorageOf<T>* in = x->data<StorageOf<T>>();
      StorageOf<T>* out = y->data<StorageOf<T>>();
      ParallelForRange(planes, std::max<int64_t>(1, kCheapOpGrain / std::max<int64_t>(plane, 1)), ctx.threads(),
                       [&](int64_t begin, int64_t end) {
                         for (int64_t c = begin; c < end; ++c)
                           out[c] = Arith<T>::Store(ReducePlane<T>(kind_, p_, in + c * plane, plane));
                       });
      return absl::OkStatus();
    });
  }

 private:
  std::string label_;
  PoolKind kind_;
  double p_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeGlobalPoolKernel(const KernelInfo& info, PoolKind kind) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() != 1 || !info.input_present[0] || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes one input X and gives one output Y; the node has ",
                                                   info.num_inputs(), " inputs and ", info.num_outputs, " outputs"));
  double p = 2;
  if (kind == PoolKind::kLp) {
    ASSIGN_OR_RETURN(p, ReadLpPoolP(label, info.opset, info.attrs()));
  }
  return std::make_unique<GlobalPoolKernel>(std::move(label), kind, p);
}

}  // namespace attune
