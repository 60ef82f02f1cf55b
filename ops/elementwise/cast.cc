// Cast and CastLike between all numeric types and bool, following the ONNX
// rules: float -> float gives +-inf out of range, integer -> integer wraps,
// anything -> bool is "!= 0" (NaN is true), bool -> number is 0/1. Float ->
// integer truncates toward zero; out-of-range values (undefined in ONNX)
// saturate and NaN gives 0. `saturate` and `round_mode` only concern float8
// types, which Attune does not hold, so they are ignored.
#include <algorithm>
#include <type_traits>

#include "ops/common/node_label.h"
#include "ops/elementwise/kernels.h"
#include "ops/elementwise/unary.h"

namespace attune::elementwise {
namespace {

template <typename From, typename To>
StorageOf<To> ConvertElement(StorageOf<From> v) {
  using CF = ComputeOf<From>;
  const CF x = Arith<From>::Load(v);
  if constexpr (std::is_same_v<To, bool>) {
    return x != CF{0} ? 1 : 0;
  } else if constexpr (std::is_same_v<To, Float16> || std::is_same_v<To, BFloat16>) {
    // One rounding from double (and wide integers) to the 16-bit type.
    const float f = std::is_same_v<CF, float> ? static_cast<float>(x)
                                              : DoubleToFloatRoundToOdd(static_cast<double>(x));
    return Arith<To>::Store(f);
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(x);
  } else if constexpr (std::is_floating_point_v<CF>) {
    return FloatToIntSaturating<To>(x);
  } else {
    return static_cast<To>(x);  // modular for integers (C++20), 0/1 for bool
  }
}

// Names of the ONNX types Attune cannot hold, for a clearer error.
const char* UnsupportedTypeName(int64_t code) {
  switch (code) {
    case 8: return "string";
    case 14: return "complex64";
    case 15: return "complex128";
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    case 24: return "float8e8m0";
    case 25: return "uint2";
    case 26: return "int2";
    default: return nullptr;
  }
}

absl::Status RunCast(KernelContext& ctx, const std::string& label, ElementType to) {
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, label));
  if (x->type() == to) {
    ctx.SetOutput(0, *x);  // same type: share the buffer
    return absl::OkStatus();
  }
  return VisitType(AllTypes{}, x->type(), label + ": input 0", [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    return VisitType(AllTypes{}, to, label + ": target type", [&](auto to_tag) -> absl::Status {
      using To = typename decltype(to_tag)::type;
      ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, to, x->shape()));
      MapUnary(x->data<StorageOf<From>>(), out->data<StorageOf<To>>(), x->num_elements(), ctx.threads(),
               kCheapOpGrain, [](StorageOf<From> v) { return ConvertElement<From, To>(v); });
      return absl::OkStatus();
    });
  });
}

// The target type must be one Attune holds; known ONNX types it cannot hold
// are Unimplemented, unknown codes are a bad model.
absl::StatusOr<ElementType> CheckTarget(int64_t code, const std::string& label) {
  if (code > 0 && code <= 64 && IsSupportedElementType(static_cast<int32_t>(code)))
    return static_cast<ElementType>(code);
  if (const char* name = UnsupportedTypeName(code))
    return absl::UnimplementedError(absl::StrCat(label, ": casting to ", name, " is not supported"));
  return absl::InvalidArgumentError(absl::StrCat(label, ": ", code, " is not an ONNX tensor data type"));
}

}  // namespace

KernelFactory CastKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    const std::string label = NodeLabel(info);
    auto to = info.attrs().GetInt("to");
    if (!to.ok()) return absl::InvalidArgumentError(absl::StrCat(label, ": ", to.status().message()));
    ASSIGN_OR_RETURN(const ElementType target, CheckTarget(*to, label));
    return MakeKernel([label, target](KernelContext& ctx) { return RunCast(ctx, label, target); });
  };
}

KernelFactory CastLikeKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel([label = NodeLabel(info)](KernelContext& ctx) -> absl::Status {
      ASSIGN_OR_RETURN(const Tensor* target, RequiredInput(ctx, 1, label));
      return RunCast(ctx, label, target->type());
    });
  };
}

}  // namespace attune::elementwise
