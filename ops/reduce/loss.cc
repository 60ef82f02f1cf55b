// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (inference). Input
// [N, C, d1..dk], target [N, d1..dk] of class indices, optional weight [C].
// loss[n, d] = -weight[t] * input[n, t, d] with t = target[n, d]; a target
// equal to ignore_index contributes 0 and no weight. "mean" divides the sum
// by the summed weights of the counted elements (their count without a
// weight), "sum" adds, "none" keeps [N, d1..dk]. SoftmaxCrossEntropyLoss
// applies it to log_softmax(scores) along axis 1, its optional second output.
// Accumulation is in double, in a fixed order, so every thread count agrees.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/type_dispatch.h"
#include "ops/reduce/loss.h"

namespace attune {
namespace {

enum class Reduction { kNone, kSum, kMean };

struct LossConfig {
  std::string label;
  Reduction reduction = Reduction::kMean;
  std::optional<int64_t> ignore_index;
  bool softmax = false;  // SoftmaxCrossEntropyLoss
};

// [N, C, D] view of the input, D the product of the trailing dims.
struct LossShape {
  int64_t n = 0, c = 0, d = 1;
  std::vector<int64_t> target_shape;
};

absl::StatusOr<LossShape> CheckShapes(const LossConfig& cfg, const Tensor& x, const Tensor& target,
                                      const Tensor* weight) {
  const auto& xs = x.shape();
  if (xs.size() < 2)
    return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": input 0 has shape ", ShapeToString(xs),
                                                   "; expected [N, C, d1, ...]"));
  LossShape s;
  s.n = xs[0];
  s.c = xs[1];
  s.target_shape = {xs[0]};
  for (size_t i = 2; i < xs.size(); ++i) {
    s.d *= xs[i];
    s.target_shape.push_back(xs[i]);
  }
  if (target.shape() != s.target_shape)
    return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": input 1 (target) has shape ",
                                                   ShapeToString(target.shape()), "; expected ",
                                                   ShapeToString(s.target_shape)));
  if (target.type() != ElementType::kInt64 && target.type() != ElementType::kInt32)
    return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": input 1 (target) has type ",
                                                   ElementTypeName(target.type()), "; expected int32 or int64"));
  if (weight != nullptr && (weight->shape() != std::vector<int64_t>{s.c} || weight->type() != x.type()))
    return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": input 2 (weight) is ", ElementTypeName(weight->type()),
                                                   ShapeToString(weight->shape()), "; expected ",
                                                   ElementTypeName(x.type()), "[", s.c, "]"));
  return s;
}

int64_t TargetAt(const Tensor& target, int64_t i) {
  return target.type() == ElementType::kInt64 ? target.data<int64_t>()[i] : target.data<int32_t>()[i];
}

// log_softmax along axis 1 of the [N, C, D] view, in double.
std::vector<double> LogSoftmax(const std::vector<double>& x, const LossShape& s) {
  std::vector<double> out(x.size());
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t d = 0; d < s.d; ++d) {
      const int64_t base = n * s.c * s.d + d;
      double max = -INFINITY;
      for (int64_t c = 0; c < s.c; ++c) max = std::max(max, x[base + c * s.d]);
      double sum = 0;
      for (int64_t c = 0; c < s.c; ++c) sum += std::exp(x[base + c * s.d] - max);
      const double log_sum = std::log(sum) + max;
      for (int64_t c = 0; c < s.c; ++c) out[base + c * s.d] = x[base + c * s.d] - log_sum;
    }
  return out;
}

template <typename T>
absl::Status RunLoss(KernelContext& ctx, const LossConfig& cfg, const Tensor& x, const Tensor& target,
                     const Tensor* weight, const LossShape& s) {
  std::vector<double> in(static_cast<size_t>(x.num_elements()));
  for (size_t i = 0; i < in.size(); ++i) in[i] = Arith<T>::Load(x.data<StorageOf<T>>()[i]);
  if (cfg.softmax) in = LogSoftmax(in, s);
  const int64_t count = s.n * s.d;
  std::vector<double> loss(static_cast<size_t>(count));
  double weight_sum = 0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t d = 0; d < s.d; ++d) {
      const int64_t i = n * s.d + d;
      const int64_t t = TargetAt(target, i);
      if (cfg.ignore_index && t == *cfg.ignore_index) continue;  // loss 0, weight 0
      if (t < 0 || t >= s.c)
        return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": input 1 (target) holds class ", t,
                                                       " at element ", i, "; expected 0..", s.c - 1));
      const double w = weight ? Arith<T>::Load(weight->data<StorageOf<T>>()[t]) : 1.0;
      loss[i] = -w * in[(n * s.c + t) * s.d + d];
      weight_sum += w;
    }
  Tensor* out;
  if (cfg.reduction == Reduction::kNone) {
    ASSIGN_OR_RETURN(out, ctx.AllocateOutputForOverwrite(0, x.type(), s.target_shape));
    for (int64_t i = 0; i < count; ++i) out->data<StorageOf<T>>()[i] = Arith<T>::Store(static_cast<ComputeOf<T>>(loss[i]));
  } else {
    double total = 0;
    for (double v : loss) total += v;
    // Without weight or ignore_index, ONNX's mean is over every element.
    const bool weighted = weight != nullptr || cfg.ignore_index.has_value();
    if (cfg.reduction == Reduction::kMean) total /= weighted ? weight_sum : static_cast<double>(count);
    ASSIGN_OR_RETURN(out, ctx.AllocateOutputForOverwrite(0, x.type(), {}));
    out->data<StorageOf<T>>()[0] = Arith<T>::Store(static_cast<ComputeOf<T>>(total));
  }
  if (cfg.softmax && ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
    ASSIGN_OR_RETURN(Tensor * log_prob, ctx.AllocateOutputForOverwrite(1, x.type(), x.shape()));
    for (size_t i = 0; i < in.size(); ++i)
      log_prob->data<StorageOf<T>>()[i] = Arith<T>::Store(static_cast<ComputeOf<T>>(in[i]));
  }
  return absl::OkStatus();
}

absl::Status Run(KernelContext& ctx, const LossConfig& cfg) {
  const Tensor* x = ctx.input(0);
  const Tensor* target = ctx.input(1);
  if (x == nullptr || target == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": inputs 0 and 1 are required"));
  const Tensor* weight = ctx.input(2);
  ASSIGN_OR_RETURN(const LossShape s, CheckShapes(cfg, *x, *target, weight));
  return VisitType(FloatTypes{}, x->type(), cfg.label + ": input 0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    return RunLoss<T>(ctx, cfg, *x, *target, weight, s);
  });
}

absl::StatusOr<std::unique_ptr<Kernel>> MakeLossKernel(const KernelInfo& info, bool softmax) {
  LossConfig cfg;
  cfg.label = NodeLabel(info);
  cfg.softmax = softmax;
  auto reduction = info.attrs().GetString("reduction", "mean");
  if (!reduction.ok()) return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": ", reduction.status().message()));
  if (*reduction == "none") {
    cfg.reduction = Reduction::kNone;
  } else if (*reduction == "sum") {
    cfg.reduction = Reduction::kSum;
  } else if (*reduction != "mean") {
    return absl::InvalidArgumentError(
        absl::StrCat(cfg.label, ": attribute reduction is '", *reduction, "'; expected none, sum or mean"));
  }
  if (info.attrs().Has("ignore_index")) {
    auto ignore = info.attrs().GetInt("ignore_index");
    if (!ignore.ok()) return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": ", ignore.status().message()));
    cfg.ignore_index = *ignore;
  }
  return MakeKernel([cfg](KernelContext& ctx) { return Run(ctx, cfg); });
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeNegativeLogLikelihoodLossKernel(const KernelInfo& info) { return MakeLossKernel(info, false); }
absl::StatusOr<std::unique_ptr<Kernel>> MakeSoftmaxCrossEntropyLossKernel(const KernelInfo& info) { return MakeLossKernel(info, true); }

}  // namespace attune
