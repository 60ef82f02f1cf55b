// Activation functions: Relu, LeakyRelu, Sigmoid, Tanh, Gelu, Softplus,
// Softsign, HardSigmoid, HardSwish, Elu, Selu, Celu, Mish, ThresholdedRelu,
// Shrink, Swish, and PRelu (whose slope broadcasts to X).
#include <algorithm>
#include <cmath>
#include <numbers>
#include <type_traits>

#include "ops/common/node_label.h"
#include "ops/elementwise/binary.h"
#include "ops/elementwise/kernels.h"
#include "ops/elementwise/unary.h"

namespace attune::elementwise {
namespace {

// Float attributes are converted to the compute type at run time, so one
// functor serves float and double.
struct ReluFn {
  template <typename C>
  C operator()(C x) const { return x < C{0} ? C{0} : x; }  // NaN stays NaN
};
struct LeakyReluFn {
  float alpha;
  template <typename C>
  C operator()(C x) const { return x >= C{0} ? x : static_cast<C>(alpha) * x; }
};
struct SigmoidFn {
  template <typename C>
  C operator()(C x) const { return C{1} / (C{1} + std::exp(-x)); }
};
struct TanhFn {
  template <typename C>
  C operator()(C x) const { return std::tanh(x); }
};
struct GeluFn {
  bool tanh_approximation;
  template <typename C>
  C operator()(C x) const {
    if (tanh_approximation) {
      const C k = static_cast<C>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);  // sqrt(2/pi)
      return C{0.5} * x * (C{1} + std::tanh(k * (x + static_cast<C>(0.044715) * x * x * x)));
    }
    return C{0.5} * x * (C{1} + std::erf(x * static_cast<C>(1 / std::numbers::sqrt2)));
  }
};
// log(1 + e^x) without overflow for large x.
template <typename C>
C Softplus(C x) {
  return x > C{0} ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
struct SoftplusFn {
  template <typename C>
  C operator()(C x) const { return Softplus(x); }
};
struct SoftsignFn {
  template <typename C>
  C operator()(C x) const { return x / (C{1} + std::fabs(x)); }
};
struct HardSigmoidFn {
  float alpha, beta;
  template <typename C>
  C operator()(C x) const {
    return std::clamp(static_cast<C>(alpha) * x + static_cast<C>(beta), C{0}, C{1});
  }
};
struct HardSwishFn {
  template <typename C>
  C operator()(C x) const { return x * std::clamp(x / C{6} + C{0.5}, C{0}, C{1}); }
};
struct EluFn {
  float alpha;
  template <typename C>
  C operator()(C x) const { return x < C{0} ? static_cast<C>(alpha) * std::expm1(x) : x; }
};
struct SeluFn {
  float alpha, gamma;
  template <typename C>
  C operator()(C x) const {
    const C g = static_cast<C>(gamma);
    return x > C{0} ? g * x : g * static_cast<C>(alpha) * std::expm1(x);
  }
};
struct CeluFn {
  float alpha;
  template <typename C>
  C operator()(C x) const {
    const C a = static_cast<C>(alpha);
    return std::max(C{0}, x) + std::min(C{0}, a * std::expm1(x / a));
  }
};
struct MishFn {
  template <typename C>
  C operator()(C x) const { return x * std::tanh(Softplus(x)); }
};
struct ThresholdedReluFn {
  float alpha;
  template <typename C>
  C operator()(C x) const { return x > static_cast<C>(alpha) ? x : C{0}; }
};
// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
struct ShrinkFn {
  float lambd, bias;
  template <typename C>
  C operator()(C x) const {
    if (x < -static_cast<C>(lambd)) return x + static_cast<C>(bias);
    if (x > static_cast<C>(lambd)) return x - static_cast<C>(bias);
    return C{0};
  }
};
struct PReluFn {
  template <typename C>
  C operator()(C x, C slope) const {
    if constexpr (std::is_integral_v<C>) return x < C{0} ? WrapMul(x, slope) : x;
    else return x < C{0} ? slope * x : x;
  }
};

template <typename Types, typename Fn>
absl::StatusOr<std::unique_ptr<Kernel>> MakeUnary(const KernelInfo& info, Types types, Fn fn,
                                                  int64_t grain = kCostlyOpGrain) {
  return MakeKernel([types, fn, grain, label = NodeLabel(info)](KernelContext& ctx) {
    return RunUnary(ctx, label, types, fn, grain);
  });
}

// Float32 inputs run the vectorised kernel of op, the other types fn.
template <typename Types, typename Fn>
absl::StatusOr<std::unique_ptr<Kernel>> MakeVectorised(const KernelInfo& info, Types types, VectorOp op, Fn fn) {
  return MakeKernel([types, op, fn, label = NodeLabel(info)](KernelContext& ctx) {
    return RunUnaryVectorised(ctx, label, types, op, fn);
  });
}

absl::StatusOr<float> FloatAttr(const KernelInfo& info, const char* name, float default_value) {
  auto value = info.attrs().GetFloat(name, default_value);
  if (!value.ok()) return Annotate(value.status(), NodeLabel(info));
  return value;
}

using ReluTypes = decltype(FloatTypes{} + SignedIntTypes{});

absl::StatusOr<std::unique_ptr<Kernel>> CreateActivation(ActivationOp op, const KernelInfo& info) {
  switch (op) {
    case ActivationOp::kRelu: return MakeUnary(info, ReluTypes{}, ReluFn{}, kCheapOpGrain);
    case ActivationOp::kLeakyRelu: {
      ASSIGN_OR_RETURN(const float alpha, FloatAttr(info, "alpha", 0.01f));
      return MakeUnary(info, FloatTypes{}, LeakyReluFn{alpha}, kCheapOpGrain);
    }
    case ActivationOp::kSigmoid: return MakeVectorised(info, FloatTypes{}, VectorOp::kSigmoid, SigmoidFn{});
    case ActivationOp::kTanh: return MakeVectorised(info, FloatTypes{}, VectorOp::kTanh, TanhFn{});
    case ActivationOp::kGelu: {
      auto approximate = info.attrs().GetString("approximate", "none");
      if (!approximate.ok()) return Annotate(approximate.status(), NodeLabel(info));
      if (*approximate != "none" && *approximate != "tanh")
        return absl::InvalidArgumentError(absl::StrCat(NodeLabel(info), ": attribute approximate must be 'none' or 'tanh', got '", *approximate, "'"));
      const bool tanh_form = *approximate == "tanh";
      return MakeVectorised(info, FloatTypes{}, tanh_form ? VectorOp::kGeluTanh : VectorOp::kGeluErf,
                            GeluFn{tanh_form});
    }
    case ActivationOp::kSoftplus: return MakeVectorised(info, FloatTypes{}, VectorOp::kSoftplus, SoftplusFn{});
    case ActivationOp::kSoftsign: return MakeUnary(info, FloatTypes{}, SoftsignFn{}, kCheapOpGrain);
    case ActivationOp::kHardSigmoid: {
      ASSIGN_OR_RETURN(const float alpha, FloatAttr(info, "alpha", 0.2f));
      ASSIGN_OR_RETURN(const float beta, FloatAttr(info, "beta", 0.5f));
      return MakeUnary(info, FloatTypes{}, HardSigmoidFn{alpha, beta}, kCheapOpGrain);
    }
    case ActivationOp::kHardSwish: return MakeVectorised(info, FloatTypes{}, VectorOp::kHardSwish, HardSwishFn{});
    case ActivationOp::kElu: {
      ASSIGN_OR_RETURN(const float alpha, FloatAttr(info, "alpha", 1.0f));
      return MakeUnary(info, FloatTypes{}, EluFn{alpha});
    }
    case ActivationOp::kSelu: {
      ASSIGN_OR_RETURN(const float alpha, FloatAttr(info, "alpha", 1.67326319217681884765625f));
      ASSIGN_OR_RETURN(const float gamma, FloatAttr(info, "gamma", 1.05070102214813232421875f));
      return MakeUnary(info, FloatTypes{}, SeluFn{alpha, gamma});
    }
    case ActivationOp::kCelu: {
      ASSIGN_OR_RETURN(const float alpha, FloatAttr(info, "alpha", 1.0f));
      if (alpha == 0.0f) return absl::InvalidArgumentError(NodeLabel(info) + ": attribute alpha must not be 0");
      return MakeUnary(info, FloatTypes{}, CeluFn{alpha});
    }
    case ActivationOp::kMish: return MakeVectorised(info, FloatTypes{}, VectorOp::kMish, MishFn{});
    case ActivationOp::kThresholdedRelu: {
      ASSIGN_OR_RETURN(const float alpha, FloatAttr(info, "alpha", 1.0f));
      return MakeUnary(info, FloatTypes{}, ThresholdedReluFn{alpha}, kCheapOpGrain);
    }
    case ActivationOp::kShrink: {
      ASSIGN_OR_RETURN(const float lambd, FloatAttr(info, "lambd", 0.5f));
      ASSIGN_OR_RETURN(const float bias, FloatAttr(info, "bias", 0.0f));
      return MakeUnary(info, FloatTypes{}, ShrinkFn{lambd, bias}, kCheapOpGrain);
    }
  }
  return absl::InternalError("unknown activation");
}

using PReluTypes = decltype(FloatTypes{} + TypeList<int32_t, int64_t, uint32_t, uint64_t>{});

// Swish(x) = x · sigmoid(alpha · x), computed as the three ops ONNX defines
// it by (Mul, Sigmoid, Mul), each rounded to the tensor's type as those ops
// round it: the fusion of x · Sigmoid(alpha · x) then gives the subgraph's
// bits, NaN and infinities included. alpha = 1 skips the first Mul, which
// would not change a bit.
absl::Status RunSwish(KernelContext& ctx, const std::string& label, float alpha) {
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, label));
  if (x->type() == ElementType::kFloat32) {
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, ElementType::kFloat32, x->shape()));
    RunVectorSwish(x->data<float>(), out->data<float>(), x->num_elements(), alpha, ctx.threads());
    return absl::OkStatus();
  }
  return VisitType(FloatTypes{}, x->type(), label + ": input 0", [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    using C = ComputeOf<T>;
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, x->type(), x->shape()));
    const C a = static_cast<C>(alpha);
    const auto rounded = [](C v) { return Arith<T>::Load(Arith<T>::Store(v)); };
    MapUnary(x->data<StorageOf<T>>(), out->data<StorageOf<T>>(), x->num_elements(), ctx.threads(), kCostlyOpGrain,
             [&](StorageOf<T> stored) {
               const C v = Arith<T>::Load(stored);
               const C s = rounded(SigmoidFn{}(alpha == 1.0f ? v : rounded(a * v)));
               return Arith<T>::Store(v * s);
             });
    return absl::OkStatus();
  });
}

}  // namespace

KernelFactory SwishKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    ASSIGN_OR_RETURN(const float alpha, FloatAttr(info, "alpha", 1.0f));
    return MakeKernel([alpha, label = NodeLabel(info)](KernelContext& ctx) { return RunSwish(ctx, label, alpha); });
  };
}

KernelFactory ActivationKernel(ActivationOp op) {
  return [op](const KernelInfo& info) { return CreateActivation(op, info); };
}

KernelFactory PReluKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel([label = NodeLabel(info)](KernelContext& ctx) -> absl::Status {
      ASSIGN_OR_RETURN(auto inputs, BinaryInputs(ctx, label));
      if (!IsUnidirectionalBroadcastable(inputs[1]->shape(), inputs[0]->shape()))
        return absl::InvalidArgumentError(absl::StrCat(label, ": slope shape ", ShapeToString(inputs[1]->shape()),
                                                       " does not broadcast to X shape ",
                                                       ShapeToString(inputs[0]->shape())));
      return RunBinary(ctx, label, PReluTypes{}, PReluFn{});
    });
  };
}

}  // namespace attune::elementwise
