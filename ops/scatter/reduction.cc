#include "ops/scatter/reduction.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "ops/common/numeric.h"
#include "ops/common/type_dispatch.h"

namespace attune::scatter {
namespace {

// One update combined into one element, in the type the element computes in
// (float for the half types). Bool follows numpy: add and max are "or", mul
// and min are "and". Float max/min return NaN when either side is NaN, as
// numpy's maximum/minimum (the ONNX reference) do.
template <ScatterReduction R, typename C>
C Reduce(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return R == ScatterReduction::kAdd || R == ScatterReduction::kMax ? (a || b) : (a && b);
  } else if constexpr (std::is_floating_point_v<C>) {
    if constexpr (R == ScatterReduction::kAdd) return a + b;
    if constexpr (R == ScatterReduction::kMul) return a * b;
    if (a != a || b != b) return a + b;  // NaN
    return R == ScatterReduction::kMax ? std::max(a, b) : std::min(a, b);
  } else {
    if constexpr (R == ScatterReduction::kAdd) return WrapAdd(a, b);
    if constexpr (R == ScatterReduction::kMul) return WrapMul(a, b);
    return R == ScatterReduction::kMax ? std::max(a, b) : std::min(a, b);
  }
}

template <ScatterReduction R, typename T>
void CombineRun(void* dst_bytes, const void* src_bytes, int64_t n) {
  using S = StorageOf<T>;
  if constexpr (R == ScatterReduction::kNone) {
    std::memcpy(dst_bytes, src_bytes, static_cast<size_t>(n) * sizeof(S));
  } else {
    S* dst = static_cast<S*>(dst_bytes);
    const S* src = static_cast<const S*>(src_bytes);
    for (int64_t i = 0; i < n; ++i) dst[i] = Arith<T>::Store(Reduce<R>(Arith<T>::Load(dst[i]), Arith<T>::Load(src[i])));
  }
}

template <typename T>
CombineFn CombineFor(ScatterReduction reduction) {
  switch (reduction) {
    case ScatterReduction::kNone: return CombineRun<ScatterReduction::kNone, T>;
    case ScatterReduction::kAdd: return CombineRun<ScatterReduction::kAdd, T>;
    case ScatterReduction::kMul: return CombineRun<ScatterReduction::kMul, T>;
    case ScatterReduction::kMax: return CombineRun<ScatterReduction::kMax, T>;
    case ScatterReduction::kMin: return CombineRun<ScatterReduction::kMin, T>;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<ScatterReduction> ReadScatterReduction(const KernelInfo& info, const std::string& label) {
  auto value = info.attrs().GetString("reduction", "none");
  if (!value.ok()) return Annotate(value.status(), label);
  struct Known {
    const char* name;
    ScatterReduction reduction;
    int since_opset;
  };
  static constexpr Known kKnown[] = {
      {"none", ScatterReduction::kNone, 1},  {"add", ScatterReduction::kAdd, 16}, {"mul", ScatterReduction::kMul, 16},
      {"max", ScatterReduction::kMax, 18}, {"min", ScatterReduction::kMin, 18},
  };
  for (const Known& k : kKnown) {
    if (*value != k.name) continue;
    if (info.opset < k.since_opset)
      return absl::InvalidArgumentError(absl::StrCat(label, ": reduction '", k.name, "' needs opset ", k.since_opset,
                                                     " or later; the model's opset is ", info.opset));
    return k.reduction;
  }
  return absl::InvalidArgumentError(absl::StrCat(label, ": reduction '", EscapeControl(*value),
                                                 "' is not one of none, add, mul, max, min"));
}

absl::StatusOr<CombineFn> SelectCombine(ElementType type, ScatterReduction reduction, const std::string& what) {
  CombineFn fn = nullptr;
  RETURN_IF_ERROR(VisitType(AllTypes{}, type, what, [&](auto tag) {
    fn = CombineFor<typename decltype(tag)::type>(reduction);
    return absl::OkStatus();
  }));
  return fn;
}

}  // namespace attune::scatter
