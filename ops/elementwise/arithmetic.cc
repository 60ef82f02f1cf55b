// Add, Sub, Mul, Div and Mod with numpy broadcasting.
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/common/node_label.h"
#include "ops/elementwise/binary.h"
#include "ops/elementwise/kernels.h"

namespace attune::elementwise {
namespace {

// Integer ops wrap on overflow (two's complement) instead of being undefined.
struct AddFn {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) return WrapAdd(a, b);
    else return a + b;
  }
};
struct SubFn {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) return WrapSub(a, b);
    else return a - b;
  }
};
struct MulFn {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) return WrapMul(a, b);
    else return a * b;
  }
};

// Integer division truncates toward zero. x / 0 gives 0 (as numpy does)
// and INT_MIN / -1 wraps: both would otherwise trap on x86.
struct DivFn {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return WrapNeg(a);
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};

// fmod=1: the remainder has the dividend's sign (C fmod); fmod=0 (integers
// only): the divisor's sign (Python %). x mod 0 gives 0 for integers.
struct ModFn {
  bool fmod = false;
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return 0;
        C r = static_cast<C>(a % b);
        if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
        return r;
      } else {
        return static_cast<C>(a % b);
      }
    } else {
      return std::fmod(a, b);
    }
  }
};

template <typename Fn>
KernelFactory BinaryFactory(Fn fn, int64_t grain = kCheapOpGrain) {
  return [fn, grain](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel([fn, grain, label = NodeLabel(info)](KernelContext& ctx) {
      return RunBinary(ctx, label, NumericTypes{}, fn, grain);
    });
  };
}

}  // namespace

KernelFactory ArithmeticKernel(ArithmeticOp op) {
  switch (op) {
    case ArithmeticOp::kAdd: return BinaryFactory(AddFn{});
    case ArithmeticOp::kSub: return BinaryFactory(SubFn{});
    case ArithmeticOp::kMul: return BinaryFactory(MulFn{});
    case ArithmeticOp::kDiv: return BinaryFactory(DivFn{});
  }
  return nullptr;
}

KernelFactory ModKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    const std::string label = NodeLabel(info);
    ASSIGN_OR_RETURN(const int64_t fmod, info.attrs().GetInt("fmod", 0));
    if (fmod != 0 && fmod != 1)
      return absl::InvalidArgumentError(absl::StrCat(label, ": attribute fmod must be 0 or 1, got ", fmod));
    const ModFn fn{fmod == 1};
    return MakeKernel([fn, label](KernelContext& ctx) -> absl::Status {
      const Tensor* a = ctx.input(0);
      if (!fn.fmod && a != nullptr &&
          (a->type() == ElementType::kFloat32 || a->type() == ElementType::kFloat64 ||
           a->type() == ElementType::kFloat16 || a->type() == ElementType::kBFloat16))
        return absl::InvalidArgumentError(
            absl::StrCat(label, ": floating-point inputs (", ElementTypeName(a->type()), ") require fmod=1"));
      return RunBinary(ctx, label, NumericTypes{}, fn, kCostlyOpGrain);
    });
  };
}

}  // namespace attune::elementwise
