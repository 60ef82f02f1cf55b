// Resize and Upsample: per axis, each output position becomes a short list
// of (input index, weight) taps, computed once per run as ONNX's reference
// computes its 1-D interpolations (nearest, linear and cubic, with
// antialias, exclude_outside and edge clamping); an output element is the
// sum over the product of its axes' taps, accumulated in double. Under
// tf_crop_and_resize a position outside the input takes extrapolation_value.
#include <algorithm>
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
#include "ops/resize/kernels.h"
#include "ops/resize/resize_params.h"

namespace attune {
namespace {

struct AxisTaps {
  std::vector<int64_t> begin;  // taps of output o: [begin[o], begin[o + 1])
  std::vector<int64_t> index;  // input index, already times the axis stride
  std::vector<double> weight;
  std::vector<bool> outside;  // tf_crop_and_resize: extrapolate
};

double CubicWeight(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// Weights for offsets start, start + 1, ... from i0 = ceil(x) - 1, ratio = x - i0 in (0, 1].
void InterpolationWeights(const ResizeAttributes& a, double ratio, double scale, int64_t& start,
                          std::vector<double>& w) {
  w.clear();
  const double s = a.antialias ? std::min(scale, 1.0) : 1.0;
  if (a.mode == ResizeMode::kLinear) {
    start = a.antialias ? static_cast<int64_t>(std::floor(-1 / s)) + 1 : 0;
    const int64_t footprint = 2 - 2 * start;
    for (int64_t i = start; i < start + footprint; ++i) w.push_back(std::max(0.0, 1 - std::fabs((i - ratio) * s)));
  } else {
    start = a.antialias ? static_cast<int64_t>(std::floor(-2 / s)) + 1 : -1;
    for (int64_t i = start; i < 2 - start; ++i) w.push_back(CubicWeight(s * (i - ratio), a.cubic_coeff_a));
  }
  if (a.antialias) {
    double sum = 0;
    for (double v : w) sum += v;
    for (double& v : w) v /= sum;
  }
}

AxisTaps ListTaps(const ResizeAttributes& a, const ResizePlan& p, int axis, int64_t stride) {
  AxisTaps t;
  const int64_t in = p.input[axis];
  const bool identity = p.output[axis] == in && p.scale[axis] == 1.0 && a.coordinate != CoordinateMode::kTfCropAndResize;
  std::vector<double> w;
  for (int64_t o = 0; o < p.output[axis]; ++o) {
    t.begin.push_back(static_cast<int64_t>(t.index.size()));
    const double x = identity ? static_cast<double>(o) : SourceCoordinate(a, p, axis, o);
    t.outside.push_back(a.coordinate == CoordinateMode::kTfCropAndResize && (x < 0 || x > static_cast<double>(in - 1)));
    const int64_t i0 = static_cast<int64_t>(std::ceil(x)) - 1;
    const double ratio = x - static_cast<double>(i0);
    auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1) * stride; };
    if (identity || a.mode == ResizeMode::kNearest) {
      bool up = false;  // take i0 + 1 rather than i0
      switch (a.nearest) {
        case NearestMode::kRoundPreferFloor: up = ratio > 0.5; break;
        case NearestMode::kRoundPreferCeil: up = ratio >= 0.5; break;
        case NearestMode::kFloor: up = ratio == 1.0; break;
        case NearestMode::kCeil: up = true; break;
      }
      t.index.push_back(clamp(up ? i0 + 1 : i0));
      t.weight.push_back(1.0);
      continue;
    }
    int64_t start = 0;
    InterpolationWeights(a, ratio, p.scale[axis], start, w);
    if (a.exclude_outside) {
      double sum = 0;
      for (size_t k = 0; k < w.size(); ++k) {
        const int64_t i = i0 + start + static_cast<int64_t>(k);
        if (i < 0 || i >= in) w[k] = 0;
        sum += w[k];
      }
      for (double& v : w) v /= sum;
    }
    for (size_t k = 0; k < w.size(); ++k) {
      t.index.push_back(clamp(i0 + start + static_cast<int64_t>(k)));
      t.weight.push_back(w[k]);
    }
  }
  t.begin.push_back(static_cast<int64_t>(t.index.size()));
  return t;
}

template <typename T>
struct ResizeRun {
  const std::vector<AxisTaps>& taps;
  const std::vector<int64_t>& out_shape;
  double extrapolation;
  const StorageOf<T>* x;
  StorageOf<T>* y;

  // Sum over the taps of axes [axis, rank) for output index `idx`.
  double Sum(const std::vector<int64_t>& idx, int axis, int64_t offset) const {
    const int rank = static_cast<int>(taps.size());
    const AxisTaps& t = taps[axis];
    double sum = 0;
    for (int64_t k = t.begin[idx[axis]]; k < t.begin[idx[axis] + 1]; ++k) {
      const double v = axis + 1 == rank ? static_cast<double>(Arith<T>::Load(x[offset + t.index[k]]))
                                        : Sum(idx, axis + 1, offset + t.index[k]);
      sum += t.weight[k] == 1.0 ? v : t.weight[k] * v;
    }
    return sum;
  }

  void Range(int64_t begin, int64_t end) const {
    const int rank = static_cast<int>(out_shape.size());
    std::vector<int64_t> idx(rank);
    int64_t rest = begin;
    for (int a = rank - 1; a >= 0; --a) idx[a] = rest % out_shape[a], rest /= out_shape[a];
    for (int64_t e = begin; e < end; ++e) {
      bool outside = false;
      for (int a = 0; a < rank; ++a) outside = outside || taps[a].outside[idx[a]];
      const double v = outside ? extrapolation : Sum(idx, 0, 0);
      if constexpr (kIsFloat<T>) {
        y[e] = Arith<T>::Store(static_cast<ComputeOf<T>>(v));
      } else {
        y[e] = FloatToIntSaturating<StorageOf<T>>(std::nearbyint(v));
      }
      for (int a = rank - 1; a >= 0; --a) {
        if (++idx[a] < out_shape[a]) break;
        idx[a] = 0;
      }
    }
  }
};

using ResizeTypes = decltype(FloatTypes{} + TypeList<int8_t, uint8_t, int32_t, int64_t>{});

class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(std::string label, int opset, ResizeAttributes attrs)
      : label_(std::move(label)), opset_(opset), attrs_(std::move(attrs)) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs input X"));
    // Resize-10 and Upsample-9: (X, scales); Resize-11 on: (X, roi, scales, sizes).
    const bool two_inputs = attrs_.upsample || opset_ < 11;
    const Tensor* roi = two_inputs ? nullptr : ctx.input(1);
    const Tensor* scales = two_inputs ? ctx.input(1) : ctx.input(2);
    const Tensor* sizes = two_inputs ? nullptr : ctx.input(3);
    ASSIGN_OR_RETURN(ResizePlan plan, PlanResize(label_, attrs_, x->shape(), roi, scales, sizes));
    const int rank = static_cast<int>(plan.input.size());
    if (rank == 0) return absl::InvalidArgumentError(absl::StrCat(label_, ": input X must have rank 1 or more"));
    std::vector<AxisTaps> taps;
    int64_t stride = 1;
    std::vector<int64_t> strides(rank);
    for (int a = rank - 1; a >= 0; --a) strides[a] = stride, stride *= plan.input[a];
    for (int a = 0; a < rank; ++a) taps.push_back(ListTaps(attrs_, plan, a, strides[a]));
    return VisitType(ResizeTypes{}, x->type(), absl::StrCat(label_, ": input X"), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), plan.output));
      if (y->num_elements() == 0) return absl::OkStatus();
      if (x->num_elements() == 0)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": input X ", ShapeToString(x->shape()),
                                                       " is empty but the output is not"));
      ResizeRun<T> run{taps, plan.output, attrs_.extrapolation_value, x->data<StorageOf<T>>(), y->data<StorageOf<T>>()};
      ParallelForRange(y->num_elements(), kCostlyOpGrain, ctx.threads(),
                       [&](int64_t begin, int64_t end) { run.Range(begin, end); });
      return absl::OkStatus();
    });
  }

 private:
  std::string label_;
  int opset_;
  ResizeAttributes attrs_;
};

absl::StatusOr<std::unique_ptr<Kernel>> MakeResizeLike(const KernelInfo& info, bool upsample) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() < 1 || !info.input_present[0] || info.num_inputs() > 4 || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes X and up to three more inputs, gives one output"));
  ASSIGN_OR_RETURN(ResizeAttributes attrs, ReadResizeAttributes(label, info.opset, upsample, info.attrs()));
  return std::make_unique<ResizeKernel>(std::move(label), info.opset, std::move(attrs));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeResizeKernel(const KernelInfo& info) { return MakeResizeLike(info, false); }
absl::StatusOr<std::unique_ptr<Kernel>> MakeUpsampleKernel(const KernelInfo& info) { return MakeResizeLike(info, true); }

}  // namespace attune
