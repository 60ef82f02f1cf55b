// One optimizer step of ai.onnx.preview.training (opset 1) over n tensors,
// each updated element by element from the learning rate R and step count T
// (scalars). Inputs R, T, then X1..Xn, G1..Gn and the optimizer's states
// (Adagrad: H; Adam: V then H; Momentum: V); outputs the new X1..Xn and the
// new states in the same grouping. With g = norm_coefficient * x + grad:
//   Adagrad:  h' = h + g^2;  x' = x - R / (1 + T * decay_factor) * g / (sqrt(h') + epsilon)
//   Adam:     v' = alpha v + (1 - alpha) g;  h' = beta h + (1 - beta) g^2;
//             r = T > 0 ? R sqrt(1 - beta^T) / (1 - alpha^T) : R;
//             x' = (1 - norm_coefficient_post) (x - r v' / (sqrt(h') + epsilon))
//   Momentum: v' = alpha v + (T > 0 ? beta : 1) g;
//             x' = x - R v' (standard) or x - R (g + alpha v') (nesterov)
// Computed in double, stored in each tensor's float type.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/float_values.h"
#include "ops/common/node_label.h"
#include "ops/training/kernels.h"

namespace attune {
namespace {

struct OptimizerAttributes {
  OptimizerKind kind = OptimizerKind::kAdagrad;
  int states = 1;  // per tensor: Adagrad H, Adam V and H, Momentum V
  double decay_factor = 0, epsilon = 1e-6, norm_coefficient = 0, norm_coefficient_post = 0;
  double alpha = 0, beta = 0;
  bool nesterov = false;
};

class OptimizerKernel final : public Kernel {
 public:
  OptimizerKernel(std::string label, OptimizerAttributes attrs, int tensors)
      : label_(std::move(label)), a_(attrs), n_(tensors) {}

  absl::Status Run(KernelContext& ctx) const override {
    ASSIGN_OR_RETURN(double r, Scalar(ctx, 0, "R"));
    ASSIGN_OR_RETURN(double t, Scalar(ctx, 1, "T"));
    for (int i = 0; i < n_; ++i) {
      const Tensor* x = ctx.input(2 + i);
      std::vector<std::vector<double>> v(2 + a_.states);  // x, g, states
      for (int k = 0; k < 2 + a_.states; ++k) {
        const Tensor* in = ctx.input(2 + k * n_ + i);
        if (in == nullptr || x == nullptr || in->shape() != x->shape())
          return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", 2 + k * n_ + i,
                                                         " must be present and have the shape of X", i + 1));
        ASSIGN_OR_RETURN(v[k], LoadAsDoubles(*in, absl::StrCat(label_, ": input ", 2 + k * n_ + i)));
      }
      Update(r, t, v);
      for (int k = 0; k < 1 + a_.states; ++k) {
        const int o = k * n_ + i;
        const Tensor* like = ctx.input(2 + (k == 0 ? 0 : k + 1) * n_ + i);
        ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(o, like->type(), like->shape()));
        RETURN_IF_ERROR(StoreDoubles(v[k == 0 ? 0 : k + 1], *out, absl::StrCat(label_, ": output ", o)));
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<double> Scalar(const KernelContext& ctx, int i, const char* name) const {
    const Tensor* s = ctx.input(i);
    if (s == nullptr || s->num_elements() != 1)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", name, " must be a scalar"));
    if (s->type() == ElementType::kInt64) return static_cast<double>(s->data<int64_t>()[0]);
    ASSIGN_OR_RETURN(std::vector<double> v, LoadAsDoubles(*s, absl::StrCat(label_, ": input ", name)));
    return v[0];
  }

  // v = {x, g, states...}, updated in place: x and the states.
  void Update(double r, double t, std::vector<std::vector<double>>& v) const {
    std::vector<double>& x = v[0];
    const std::vector<double>& grad = v[1];
    for (size_t e = 0; e < x.size(); ++e) {
      const double g = a_.norm_coefficient * x[e] + grad[e];
      switch (a_.kind) {
        case OptimizerKind::kAdagrad: {
          double& h = v[2][e];
          h += g * g;
          x[e] -= r / (1 + t * a_.decay_factor) * g / (std::sqrt(h) + a_.epsilon);
          break;
        }
        case OptimizerKind::kAdam: {
          double& m = v[2][e];
          double& h = v[3][e];
          m = a_.alpha * m + (1 - a_.alpha) * g;
          h = a_.beta * h + (1 - a_.beta) * g * g;
          const double rate = t > 0 ? r * std::sqrt(1 - std::pow(a_.beta, t)) / (1 - std::pow(a_.alpha, t)) : r;
          x[e] = (1 - a_.norm_coefficient_post) * (x[e] - rate * m / (std::sqrt(h) + a_.epsilon));
          break;
        }
        case OptimizerKind::kMomentum: {
          double& m = v[2][e];
          m = a_.alpha * m + (t > 0 ? a_.beta : 1.0) * g;
          x[e] -= a_.nesterov ? r * (g + a_.alpha * m) : r * m;
          break;
        }
      }
    }
  }

  std::string label_;
  OptimizerAttributes a_;
  int n_;
};

absl::Status ReadAttributes(const std::string& label, const Attributes& attrs, OptimizerAttributes& a) {
  auto get = [&](const char* name, double& into, bool required) -> absl::Status {
    if (!attrs.Has(name)) {
      if (required) return absl::InvalidArgumentError(absl::StrCat(label, ": attribute '", name, "' is required"));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(float v, attrs.GetFloat(name));
    if (!std::isfinite(v))
      return absl::InvalidArgumentError(absl::StrCat(label, ": attribute '", name, "' is ", v, "; it must be finite"));
    into = v;
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(get("norm_coefficient", a.norm_coefficient, a.kind == OptimizerKind::kMomentum));
  switch (a.kind) {
    case OptimizerKind::kAdagrad:
      RETURN_IF_ERROR(get("decay_factor", a.decay_factor, false));
      return get("epsilon", a.epsilon, false);
    case OptimizerKind::kAdam:
      a.alpha = 0.9, a.beta = 0.999;
      RETURN_IF_ERROR(get("alpha", a.alpha, false));
      RETURN_IF_ERROR(get("beta", a.beta, false));
      RETURN_IF_ERROR(get("norm_coefficient_post", a.norm_coefficient_post, false));
      return get("epsilon", a.epsilon, false);
    case OptimizerKind::kMomentum: {
      RETURN_IF_ERROR(get("alpha", a.alpha, true));
      RETURN_IF_ERROR(get("beta", a.beta, true));
      if (!attrs.Has("mode")) return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'mode' is required"));
      ASSIGN_OR_RETURN(std::string mode, attrs.GetString("mode"));
      if (mode != "standard" && mode != "nesterov")
        return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'mode' has the unknown value ",
                                                       QuoteName(mode), "; expected standard or nesterov"));
      a.nesterov = mode == "nesterov";
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeOptimizerKernel(const KernelInfo& info, OptimizerKind kind) {
  std::string label = NodeLabel(info);
  OptimizerAttributes a;
  a.kind = kind;
  a.states = kind == OptimizerKind::kAdam ? 2 : 1;
  RETURN_IF_ERROR(ReadAttributes(label, info.attrs(), a));
  const int per_tensor = 2 + a.states;
  const int tensors = (info.num_inputs() - 2) / per_tensor;
  if (info.num_inputs() < 2 + per_tensor || (info.num_inputs() - 2) % per_tensor != 0 ||
      info.num_outputs != tensors * (1 + a.states))
    return absl::InvalidArgumentError(absl::StrCat(label, ": has ", info.num_inputs(), " inputs and ", info.num_outputs,
                                                   " outputs; expected R, T and ", per_tensor, " inputs per tensor, and ",
                                                   1 + a.states, " outputs per tensor"));
  for (int i = 0; i < info.num_inputs(); ++i)
    if (!info.input_present[i]) return absl::InvalidArgumentError(absl::StrCat(label, ": input ", i, " is missing"));
  return std::make_unique<OptimizerKernel>(std::move(label), a, tensors);
}

}  // namespace attune
