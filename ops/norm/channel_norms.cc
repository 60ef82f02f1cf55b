// The per-channel normalizations of CNNs over X [N, C, D...]:
// BatchNormalization (inference: running mean and variance given),
// InstanceNormalization (statistics per (n, c) plane) and GroupNormalization
// (statistics per group of channels; scale and bias per group before opset
// 21, per channel from 21). Statistics are accumulated in double; float16 and
// bfloat16 compute in float.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/common/input_checks.h"
#include "ops/common/numeric.h"
#include "ops/common/parallel.h"
#include "ops/common/type_dispatch.h"
#include "ops/norm/kernels.h"

namespace attune {
namespace {

enum class ChannelNorm { kBatch, kInstance, kGroup };

// A float tensor of `count` elements as doubles; InvalidArgument naming the tensor otherwise.
absl::StatusOr<std::vector<double>> ReadParam(const std::string& label, const char* name, const Tensor* t,
                                              int64_t count) {
  if (t == nullptr) return absl::InvalidArgumentError(absl::StrCat(label, ": input ", name, " is missing"));
  if (t->num_elements() != count || t->shape().size() > 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input ", name, " ", ShapeToString(t->shape()),
                                                   " must be a vector of ", count, " elements"));
  std::vector<double> out(count);
  RETURN_IF_ERROR(VisitType(FloatTypes{}, t->type(), absl::StrCat(label, ": input ", name), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const StorageOf<T>* d = t->data<StorageOf<T>>();
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<double>(Arith<T>::Load(d[i]));
    return absl::OkStatus();
  }));
  return out;
}

// Per channel: y = x * scale[c] + shift[c] over one plane of `size`, or,
// with statistics per plane, scale and shift computed from them.
template <typename T>
void AffinePlane(const StorageOf<T>* x, StorageOf<T>* y, int64_t size, double scale, double shift) {
  using C = ComputeOf<T>;
  const C a = static_cast<C>(scale), b = static_cast<C>(shift);
  for (int64_t i = 0; i < size; ++i) y[i] = Arith<T>::Store(Arith<T>::Load(x[i]) * a + b);
}

// Mean and (biased) variance of `size` elements, accumulated in double.
template <typename T>
void Moments(const StorageOf<T>* x, int64_t size, double& mean, double& var) {
  double sum = 0;
  for (int64_t i = 0; i < size; ++i) sum += static_cast<double>(Arith<T>::Load(x[i]));
  mean = size > 0 ? sum / static_cast<double>(size) : 0;
  double sq = 0;
  for (int64_t i = 0; i < size; ++i) {
    const double d = static_cast<double>(Arith<T>::Load(x[i])) - mean;
    sq += d * d;
  }
  var = size > 0 ? sq / static_cast<double>(size) : 0;
}

class ChannelNormKernel final : public Kernel {
 public:
  ChannelNormKernel(std::string label, ChannelNorm kind, int opset, double epsilon, int64_t groups)
      : label_(std::move(label)), kind_(kind), opset_(opset), epsilon_(epsilon), groups_(groups) {}

  absl::Status Run(KernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, ChannelsFirstInput(ctx, label_));
    const std::vector<int64_t>& shape = x->shape();
    const int64_t n = shape[0], c = shape[1];
    const int64_t plane = n * c == 0 ? 0 : x->num_elements() / (n * c);
    std::vector<double> scale, shift;  // per channel, or per (n, c) plane
    ASSIGN_OR_RETURN(std::vector<double> gamma, ReadParam(label_, "scale", ctx.input(1), ParamCount(c)));
    ASSIGN_OR_RETURN(std::vector<double> beta, ReadParam(label_, "B", ctx.input(2), ParamCount(c)));
    if (kind_ == ChannelNorm::kBatch) {
      ASSIGN_OR_RETURN(std::vector<double> mean, ReadParam(label_, "input_mean", ctx.input(3), c));
      ASSIGN_OR_RETURN(std::vector<double> var, ReadParam(label_, "input_var", ctx.input(4), c));
      scale.resize(c);
      shift.resize(c);
      for (int64_t i = 0; i < c; ++i) {
        scale[i] = gamma[i] / std::sqrt(var[i] + epsilon_);
        shift[i] = beta[i] - mean[i] * scale[i];
      }
    }
    if (kind_ == ChannelNorm::kGroup && c % groups_ != 0)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input X has ", c, " channels, not divisible by ",
                                                     "num_groups ", groups_));
    return VisitType(FloatTypes{}, x->type(), absl::StrCat(label_, ": input X"), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), shape));
      const StorageOf<T>* in = x->data<StorageOf<T>>();
      StorageOf<T>* out = y->data<StorageOf<T>>();
      // Batch and instance norms work per plane; group norm per group of planes.
      const int64_t per_unit = kind_ == ChannelNorm::kGroup ? c / groups_ : 1;
      const int64_t units = kind_ == ChannelNorm::kGroup ? n * groups_ : n * c;
      ParallelForRange(units, std::max<int64_t>(1, kCheapOpGrain / std::max<int64_t>(plane * per_unit, 1)),
                       ctx.threads(), [&](int64_t begin, int64_t end) {
                         for (int64_t u = begin; u < end; ++u) Unit<T>(u, c, plane, per_unit, gamma, beta, scale,
                                                                       shift, in, out);
                       });
      return absl::OkStatus();
    });
  }

 private:
  // Scale and bias hold one entry per channel, or per group for GroupNormalization before opset 21.
  int64_t ParamCount(int64_t channels) const {
    return kind_ == ChannelNorm::kGroup && opset_ < 21 ? groups_ : channels;
  }

  template <typename T>
  void Unit(int64_t u, int64_t c, int64_t plane, int64_t per_unit, const std::vector<double>& gamma,
            const std::vector<double>& beta, const std::vector<double>& scale, const std::vector<double>& shift,
            const StorageOf<T>* in, StorageOf<T>* out) const {
    const int64_t first_plane = u * per_unit;  // planes are (n, c) in order
    if (kind_ == ChannelNorm::kBatch) {
      const int64_t ch = u % c;
      AffinePlane<T>(in + u * plane, out + u * plane, plane, scale[ch], shift[ch]);
      return;
    }
    double mean = 0, var = 0;
    Moments<T>(in + first_plane * plane, plane * per_unit, mean, var);
    const double inv = 1.0 / std::sqrt(var + epsilon_);
    for (int64_t k = 0; k < per_unit; ++k) {
      const int64_t p = first_plane + k, ch = p % c;
      const int64_t param = kind_ == ChannelNorm::kGroup && opset_ < 21 ? ch / per_unit : ch;
      const double a = gamma[param] * inv;
      AffinePlane<T>(in + p * plane, out + p * plane, plane, a, beta[param] - mean * a);
    }
  }

  std::string label_;
  ChannelNorm kind_;
  int opset_;
  double epsilon_;
  int64_t groups_;
};

absl::StatusOr<std::unique_ptr<Kernel>> MakeChannelNorm(const KernelInfo& info, ChannelNorm kind, int inputs) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() != inputs)
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": takes ", inputs, " inputs; the node has ", info.num_inputs()));
  for (int i = 0; i < inputs; ++i)
    if (!info.input_present[i])
      return absl::InvalidArgumentError(absl::StrCat(label, ": input ", i, " is required"));
  ASSIGN_OR_RETURN(float epsilon, info.attrs().GetFloat("epsilon", 1e-5f));
  int64_t groups = 1;
  if (kind == ChannelNorm::kBatch) {
    ASSIGN_OR_RETURN(int64_t training, info.attrs().GetInt("training_mode", 0));
    if (training != 0 || info.num_outputs > 1)
      return absl::UnimplementedError(absl::StrCat(
          label, ": training mode (training_mode=1, or the running mean and variance outputs) is not supported; "
                 "Attune runs BatchNormalization for inference"));
    ASSIGN_OR_RETURN(int64_t spatial, info.attrs().GetInt("spatial", 1));
    if (spatial != 1)
      return absl::UnimplementedError(absl::StrCat(label, ": spatial=0 (statistics per element) is not supported"));
  }
  if (kind == ChannelNorm::kGroup) {
    ASSIGN_OR_RETURN(groups, info.attrs().GetInt("num_groups"));
    if (groups < 1)
      return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'num_groups' is ", groups,
                                                     "; it must be positive"));
  }
  if (info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": gives one output; the node has ", info.num_outputs));
  return std::make_unique<ChannelNormKernel>(std::move(label), kind, info.opset, epsilon, groups);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeBatchNormalizationKernel(const KernelInfo& info) {
  return MakeChannelNorm(info, ChannelNorm::kBatch, 5);
}
absl::StatusOr<std::unique_ptr<Kernel>> MakeInstanceNormalizationKernel(const KernelInfo& info) {
  return MakeChannelNorm(info, ChannelNorm::kInstance, 3);
}
absl::StatusOr<std::unique_ptr<Kernel>> MakeGroupNormalizationKernel(const KernelInfo& info) {
  return MakeChannelNorm(info, ChannelNorm::kGroup, 3);
}

}  // namespace attune
