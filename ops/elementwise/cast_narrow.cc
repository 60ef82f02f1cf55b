#include "ops/elementwise/cast_narrow.h"

#include <type_traits>

#include "core/common/status_macros.h"
#include "ops/common/type_dispatch.h"
#include "ops/elementwise/cast_element.h"
#include "ops/elementwise/unary.h"

namespace attune::elementwise {
namespace {

bool IsNarrowInteger(ElementType type) {
  return type == kInt4 || type == kUint4 || type == kInt2 || type == kUint2;
}

// A narrow integer element's value (the byte holds it sign-extended).
int64_t NarrowIntegerValue(ElementType type, uint8_t v) {
  return (type == kInt4 || type == kInt2) ? static_cast<int8_t>(v) : v;
}

// A native element to a narrow one, with a single rounding: double goes to
// float by round-to-odd, which float's extra bits make safe for RNE after.
template <typename From>
uint8_t ToNarrow(StorageOf<From> v, ElementType to, const NarrowCastOptions& o) {
  using CF = ComputeOf<From>;
  const CF x = Arith<From>::Load(v);
  if constexpr (std::is_floating_point_v<CF>) {
    const float f = std::is_same_v<CF, float> ? static_cast<float>(x) : DoubleToFloatRoundToOdd(x);
    return FloatToNarrow(to, f, o.saturate, o.rounding);
  } else {
    if (IsNarrowInteger(to)) return IntegerToNarrow(to, static_cast<int64_t>(x));
    return FloatToNarrow(to, DoubleToFloatRoundToOdd(static_cast<double>(x)), o.saturate, o.rounding);
  }
}

template <typename To>
StorageOf<To> FromNarrow(uint8_t v, ElementType from) {
  if (IsNarrowInteger(from)) return ConvertElement<int64_t, To>(NarrowIntegerValue(from, v));
  return ConvertElement<float, To>(NarrowToFloat(from, v));
}

uint8_t NarrowToNarrow(uint8_t v, ElementType from, ElementType to, const NarrowCastOptions& o) {
  if (IsNarrowInteger(from) && IsNarrowInteger(to)) return IntegerToNarrow(to, NarrowIntegerValue(from, v));
  // Every narrow value is exact in float.
  return FloatToNarrow(to, NarrowToFloat(from, v), o.saturate, o.rounding);
}

}  // namespace

absl::Status CastWithNarrowType(KernelContext& ctx, const Tensor& x, ElementType to,
                                const NarrowCastOptions& options, const std::string& label) {
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, to, x.shape()));
  const ElementType from = x.type();
  const int64_t n = x.num_elements();
  if (IsNarrowType(from) && IsNarrowType(to)) {
    MapUnary(x.data<uint8_t>(), out->data<uint8_t>(), n, ctx.threads(), kCheapOpGrain,
             [&](uint8_t v) { return NarrowToNarrow(v, from, to, options); });
    return absl::OkStatus();
  }
  if (IsNarrowType(to)) {
    return VisitType(AllTypes{}, from, label + ": input 0", [&](auto tag) {
      using From = typename decltype(tag)::type;
      MapUnary(x.data<StorageOf<From>>(), out->data<uint8_t>(), n, ctx.threads(), kCheapOpGrain,
               [&](StorageOf<From> v) { return ToNarrow<From>(v, to, options); });
      return absl::OkStatus();
    });
  }
  return VisitType(AllTypes{}, to, label + ": target type", [&](auto tag) {
    using To = typename decltype(tag)::type;
    MapUnary(x.data<uint8_t>(), out->data<StorageOf<To>>(), n, ctx.threads(), kCheapOpGrain,
             [&](uint8_t v) { return FromNarrow<To>(v, from); });
    return absl::OkStatus();
  });
}

}  // namespace attune::elementwise
