// Unary math: Abs Neg Sign Reciprocal Sqrt Exp Log Erf Floor Ceil Round, the
// trigonometric and hyperbolic functions, IsNaN and IsInf.
#include <cmath>
#include <type_traits>

#include "ops/common/node_label.h"
#include "ops/elementwise/kernels.h"
#include "ops/elementwise/unary.h"

namespace attune::elementwise {
namespace {

template <typename Types, typename Fn>
KernelFactory UnaryFactory(Types types, Fn fn, int64_t grain = kCostlyOpGrain) {
  return [types, fn, grain](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel([types, fn, grain, label = NodeLabel(info)](KernelContext& ctx) {
      return RunUnary(ctx, label, types, fn, grain);
    });
  };
}

// Float32 inputs run the vectorised kernel of op, the other types fn.
template <typename Types, typename Fn>
KernelFactory VectorisedFactory(Types types, VectorOp op, Fn fn) {
  return [types, op, fn](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel([types, op, fn, label = NodeLabel(info)](KernelContext& ctx) {
      return RunUnaryVectorised(ctx, label, types, op, fn);
    });
  };
}

// A real function applied to any numeric type: integers go through double and
// back with a saturating conversion (ONNX allows Erf on integers).
template <typename F>
struct RealFn {
  F f;
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) return f(x);
    else return FloatToIntSaturating<C>(f(static_cast<double>(x)));
  }
};
template <typename F>
RealFn(F) -> RealFn<F>;

struct AbsFn {
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) return std::fabs(x);
    else if constexpr (std::is_signed_v<C>) return x < 0 ? WrapNeg(x) : x;
    else return x;
  }
};
struct NegFn {
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) return WrapNeg(x);
    else return -x;
  }
};
// Sign(NaN) is NaN, Sign(+-0) is 0.
struct SignFn {
  template <typename C>
  C operator()(C x) const {
    if (x > C{0}) return C{1};
    if constexpr (std::is_signed_v<C> || std::is_floating_point_v<C>) {
      if (x < C{0}) return static_cast<C>(-1);
    }
    return x == C{0} ? C{0} : x;
  }
};
struct IsNaNFn {
  template <typename C>
  bool operator()(C x) const { return std::isnan(x); }
};
struct IsInfFn {
  bool negative = true;
  bool positive = true;
  template <typename C>
  bool operator()(C x) const { return std::isinf(x) && (x > 0 ? positive : negative); }
};

}  // namespace

KernelFactory UnaryMathKernel(UnaryMathOp op) {
  switch (op) {
    case UnaryMathOp::kAbs: return UnaryFactory(NumericTypes{}, AbsFn{}, kCheapOpGrain);
    case UnaryMathOp::kNeg: return UnaryFactory(SignedTypes{}, NegFn{}, kCheapOpGrain);
    case UnaryMathOp::kSign: return UnaryFactory(NumericTypes{}, SignFn{}, kCheapOpGrain);
    case UnaryMathOp::kReciprocal:
      return UnaryFactory(FloatTypes{}, [](auto x) { return decltype(x){1} / x; }, kCheapOpGrain);
    case UnaryMathOp::kSqrt: return UnaryFactory(FloatTypes{}, [](auto x) { return std::sqrt(x); }, kCheapOpGrain);
    case UnaryMathOp::kExp:
      return VectorisedFactory(FloatTypes{}, VectorOp::kExp, [](auto x) { return std::exp(x); });
    case UnaryMathOp::kLog:
      return VectorisedFactory(FloatTypes{}, VectorOp::kLog, [](auto x) { return std::log(x); });
    case UnaryMathOp::kErf:
      return VectorisedFactory(NumericTypes{}, VectorOp::kErf, RealFn{[](auto x) { return std::erf(x); }});
    case UnaryMathOp::kFloor: return UnaryFactory(FloatTypes{}, [](auto x) { return std::floor(x); }, kCheapOpGrain);
    case UnaryMathOp::kCeil: return UnaryFactory(FloatTypes{}, [](auto x) { return std::ceil(x); }, kCheapOpGrain);
    // Halves round to even; nearbyint does so in the default rounding mode.
    case UnaryMathOp::kRound:
      return UnaryFactory(FloatTypes{}, [](auto x) { return std::nearbyint(x); }, kCheapOpGrain);
    case UnaryMathOp::kSin: return UnaryFactory(FloatTypes{}, [](auto x) { return std::sin(x); });
    case UnaryMathOp::kCos: return UnaryFactory(FloatTypes{}, [](auto x) { return std::cos(x); });
    case UnaryMathOp::kTan: return UnaryFactory(FloatTypes{}, [](auto x) { return std::tan(x); });
    case UnaryMathOp::kAsin: return UnaryFactory(FloatTypes{}, [](auto x) { return std::asin(x); });
    case UnaryMathOp::kAcos: return UnaryFactory(FloatTypes{}, [](auto x) { return std::acos(x); });
    case UnaryMathOp::kAtan: return UnaryFactory(FloatTypes{}, [](auto x) { return std::atan(x); });
    case UnaryMathOp::kSinh: return UnaryFactory(FloatTypes{}, [](auto x) { return std::sinh(x); });
    case UnaryMathOp::kCosh: return UnaryFactory(FloatTypes{}, [](auto x) { return std::cosh(x); });
    case UnaryMathOp::kAsinh: return UnaryFactory(FloatTypes{}, [](auto x) { return std::asinh(x); });
    case UnaryMathOp::kAcosh: return UnaryFactory(FloatTypes{}, [](auto x) { return std::acosh(x); });
    case UnaryMathOp::kAtanh: return UnaryFactory(FloatTypes{}, [](auto x) { return std::atanh(x); });
    case UnaryMathOp::kIsNaN: return UnaryFactory(FloatTypes{}, IsNaNFn{}, kCheapOpGrain);
    case UnaryMathOp::kIsInf:
      return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
        ASSIGN_OR_RETURN(const int64_t negative, info.attrs().GetInt("detect_negative", 1));
        ASSIGN_OR_RETURN(const int64_t positive, info.attrs().GetInt("detect_positive", 1));
        const IsInfFn fn{negative != 0, positive != 0};
        return MakeKernel([fn, label = NodeLabel(info)](KernelContext& ctx) {
          return RunUnary(ctx, label, FloatTypes{}, fn, kCheapOpGrain);
        });
      };
  }
  return nullptr;
}

}  // namespace attune::elementwise
