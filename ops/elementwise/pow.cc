// Pow: base and exponent may have different types (opset 12+); the output
// has the base's type.
#include <cmath>
#include <type_traits>

#include "ops/common/node_label.h"
#include "ops/elementwise/binary.h"
#include "ops/elementwise/kernels.h"
#include "ops/elementwise/unary.h"
#include "ops/elementwise/vector_math.h"

namespace attune::elementwise {
namespace {

using BaseTypes = decltype(FloatTypes{} + TypeList<int32_t, int64_t>{});

// Integer power by squaring, wrapping on overflow. Negative exponents give the
// truncated real result: 1 for base 1, +-1 for base -1, else 0 (also for 0,
// where the real result is infinite).
template <typename I, typename E>
I IntegerPow(I base, E exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<I>) {
      if (base == -1) return (exponent % 2 == 0) ? 1 : -1;
    }
    return 0;
  }
  I result = 1;
  auto e = static_cast<std::make_unsigned_t<E>>(exponent);
  while (e != 0) {
    if (e & 1) result = WrapMul(result, base);
    base = WrapMul(base, base);
    e >>= 1;
  }
  return result;
}

template <typename B, typename E>
ComputeOf<B> PowValue(ComputeOf<B> base, ComputeOf<E> exponent) {
  using CB = ComputeOf<B>;
  using CE = ComputeOf<E>;
  if constexpr (std::is_floating_point_v<CB>) {
    // A double exponent makes a float base compute in double, as numpy would.
    using W = std::conditional_t<std::is_same_v<CE, double>, double, CB>;
    return static_cast<CB>(std::pow(static_cast<W>(base), static_cast<W>(exponent)));
  } else if constexpr (std::is_integral_v<CE>) {
    return IntegerPow(base, exponent);
  } else {
    return FloatToIntSaturating<CB>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
  }
}

template <typename B, typename E>
absl::Status RunPowTyped(KernelContext& ctx, const Tensor& base, const Tensor& exponent, const BroadcastPlan& plan) {
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, base.type(), plan.output_shape()));
  const auto* b = base.data<StorageOf<B>>();
  const auto* e = exponent.data<StorageOf<E>>();
  auto* o = out->data<StorageOf<B>>();
  // A float32 base to one small non-negative integer power (x^2 in decomposed
  // norms, x^3 in the tanh form of Gelu) is a few vectorised multiplications.
  if constexpr (std::is_same_v<B, float>) {
    if (exponent.num_elements() == 1 && plan.num_elements() == base.num_elements()) {
      const double y = static_cast<double>(Arith<E>::Load(e[0]));
      if (y >= 0 && y <= kMaxPowIntExponent && y == std::floor(y)) {
        RunVectorPowInt(b, o, plan.num_elements(), static_cast<int>(y), ctx.threads());
        return absl::OkStatus();
      }
    }
  }
  // x^2 is exactly x*x and much cheaper than pow.
  if constexpr (kIsFloat<B>) {
    if (exponent.num_elements() == 1 && plan.num_elements() == base.num_elements() &&
        static_cast<double>(Arith<E>::Load(e[0])) == 2.0) {
      MapUnary(b, o, plan.num_elements(), ctx.threads(), kCheapOpGrain, [](StorageOf<B> x) {
        const auto v = Arith<B>::Load(x);
        return Arith<B>::Store(v * v);
      });
      return absl::OkStatus();
    }
  }
  BroadcastBinary(plan, b, e, o, ctx.threads(), kCostlyOpGrain, [](StorageOf<B> x, StorageOf<E> y) {
    return Arith<B>::Store(PowValue<B, E>(Arith<B>::Load(x), Arith<E>::Load(y)));
  });
  return absl::OkStatus();
}

}  // namespace

KernelFactory PowKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel([label = NodeLabel(info)](KernelContext& ctx) -> absl::Status {
      ASSIGN_OR_RETURN(auto inputs, BinaryInputs(ctx, label));
      const Tensor& base = *inputs[0];
      const Tensor& exponent = *inputs[1];
      auto plan = BroadcastPlan::Create({base.shape(), exponent.shape()});
      if (!plan.ok()) return Annotate(plan.status(), label);
      return VisitType(BaseTypes{}, base.type(), label + ": input 0 (X)", [&](auto base_tag) {
        using B = typename decltype(base_tag)::type;
        return VisitType(NumericTypes{}, exponent.type(), label + ": input 1 (Y)", [&](auto exp_tag) {
          using E = typename decltype(exp_tag)::type;
          return RunPowTyped<B, E>(ctx, base, exponent, *plan);
        });
      });
    });
  };
}

}  // namespace attune::elementwise
