// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (which is the first
// on log_softmax of its scores over axis 1): per element of the target,
// -input[n, target, d...] times the class weight (0 where the target equals
// ignore_index), then none, sum or mean (divided by the summed weights when
// weights or ignore_index are given, by the element count otherwise), as
// ONNX's reference defines them. Arithmetic in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/type_dispatch.h"
#include "ops/loss/kernels.h"

namespace attune {
namespace {

enum class Reduction { kNone, kSum, kMean };

struct LossShape {
  int64_t n = 0, c = 0, d = 1;  // input viewed as [N, C, D]
};

template <typename T>
std::vector<double> LoadAll(const Tensor& t) {
  std::vector<double> v(t.num_elements());
  const StorageOf<T>* p = t.data<StorageOf<T>>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(Arith<T>::Load(p[i]));
  return v;
}

// log_softmax over C of [N, C, D], in place.
void LogSoftmax(std::vector<double>& x, const LossShape& s) {
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t d = 0; d < s.d; ++d) {
      double* base = x.data() + n * s.c * s.d + d;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < s.c; ++c) mx = std::max(mx, base[c * s.d]);
      double sum = 0;
      for (int64_t c = 0; c < s.c; ++c) sum += std::exp(base[c * s.d] - mx);
      const double log_sum = std::log(sum);
      for (int64_t c = 0; c < s.c; ++c) base[c * s.d] = base[c * s.d] - mx - log_sum;
    }
}

class ClassLossKernel final : public Kernel {
 public:
  ClassLossKernel(std::string label, bool softmax, Reduction reduction, std::optional<int64_t> ignore_index)
      : label_(std::move(label)), softmax_(softmax), reduction_(reduction), ignore_index_(ignore_index) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* target = ctx.input(1);
    const Tensor* weight = ctx.input(2);
    if (x == nullptr || target == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs the input and the target"));
    const std::vector<int64_t>& xs = x->shape();
    if (xs.size() < 2)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", ShapeToString(xs), " must be [N, C, ...]"));
    std::vector<int64_t> ts = xs;
    ts.erase(ts.begin() + 1);
    if (target->shape() != ts)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": target ", ShapeToString(target->shape()),
                                                     " must be ", ShapeToString(ts), " for input ", ShapeToString(xs)));
    if (target->type() != ElementType::kInt64 && target->type() != ElementType::kInt32)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": target must be int32 or int64"));
    LossShape s{xs[0], xs[1], 1};
    for (size_t i = 2; i < xs.size(); ++i) s.d *= xs[i];
    if (weight != nullptr && (weight->shape() != std::vector<int64_t>{s.c} || weight->type() != x->type()))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": weight ", ShapeToString(weight->shape()), " must be [",
                                                     s.c, "] of the input's type"));
    return VisitType(FloatTypes{}, x->type(), absl::StrCat(label_, ": input"), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      std::vector<double> in = LoadAll<T>(*x);
      if (softmax_) LogSoftmax(in, s);
      std::vector<double> w;
      if (weight != nullptr) w = LoadAll<T>(*weight);
      const int64_t count = s.n * s.d;
      std::vector<double> loss(count);
      double weight_sum = 0;
      for (int64_t i = 0; i < count; ++i) {
        const int64_t t = target->type() == ElementType::kInt64 ? target->data<int64_t>()[i]
                                                                 : target->data<int32_t>()[i];
        if (ignore_index_ && t == *ignore_index_) continue;
        if (t < 0 || t >= s.c)
          return absl::InvalidArgumentError(absl::StrCat(label_, ": target holds ", t, ", outside the ", s.c,
                                                         " classes"));
        const double wt = w.empty() ? 1.0 : w[t];
        const int64_t n = i / s.d, d = i % s.d;
        loss[i] = -in[(n * s.c + t) * s.d + d] * wt;
        weight_sum += wt;
      }
      std::vector<int64_t> out_shape = reduction_ == Reduction::kNone ? ts : std::vector<int64_t>{};
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), out_shape));
      StorageOf<T>* out = y->data<StorageOf<T>>();
      auto store = [](double v) { return Arith<T>::Store(static_cast<ComputeOf<T>>(v)); };
      if (reduction_ == Reduction::kNone) {
        for (int64_t i = 0; i < count; ++i) out[i] = store(loss[i]);
      } else {
        double sum = 0;
        for (double v : loss) sum += v;
        const bool weighted = weight != nullptr || ignore_index_.has_value();
        if (reduction_ == Reduction::kMean) sum /= weighted ? weight_sum : static_cast<double>(count);
        out[0] = store(sum);
      }
      if (softmax_ && ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
        ASSIGN_OR_RETURN(Tensor * lp, ctx.AllocateOutputForOverwrite(1, x->type(), xs));
        StorageOf<T>* o = lp->data<StorageOf<T>>();
        for (size_t i = 0; i < in.size(); ++i) o[i] = store(in[i]);
      }
      return absl::OkStatus();
    });
  }

 private:
  std::string label_;
  bool softmax_;
  Reduction reduction_;
  std::optional<int64_t> ignore_index_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeClassLossKernel(const KernelInfo& info, bool softmax) {
  std::string label = NodeLabel(info);
  const int max_outputs = softmax ? 2 : 1;
  if (info.num_inputs() < 2 || info.num_inputs() > 3 || !info.input_present[0] || !info.input_present[1] ||
      info.num_outputs < 1 || info.num_outputs > max_outputs)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes the input, the target and optional weights, and ",
                                                   "gives ", softmax ? "the loss and optional log_prob" : "the loss"));
  ASSIGN_OR_RETURN(std::string r, info.attrs().GetString("reduction", "mean"));
  Reduction reduction;
  if (r == "none") reduction = Reduction::kNone;
  else if (r == "sum") reduction = Reduction::kSum;
  else if (r == "mean") reduction = Reduction::kMean;
  else return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'reduction' has the unknown value ",
                                                    QuoteName(r), "; it must be none, sum or mean"));
  std::optional<int64_t> ignore;
  if (info.attrs().Has("ignore_index")) {
    ASSIGN_OR_RETURN(int64_t i, info.attrs().GetInt("ignore_index"));
    ignore = i;
  }
  return std::make_unique<ClassLossKernel>(std::move(label), softmax, reduction, ignore);
}

}  // namespace attune
