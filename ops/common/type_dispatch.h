// Run-time element type -> compile-time C++ type, over an op's allowed list.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "attune/element_type.h"
#include "core/common/strings.h"

namespace attune {

template <typename... Ts>
struct TypeList {};

template <typename... A, typename... B>
constexpr TypeList<A..., B...> operator+(TypeList<A...>, TypeList<B...>) {
  return {};
}

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = decltype(SignedIntTypes{} + UnsignedIntTypes{});
using SignedTypes = decltype(FloatTypes{} + SignedIntTypes{});
using NumericTypes = decltype(FloatTypes{} + IntTypes{});
using AllTypes = decltype(NumericTypes{} + TypeList<bool>{});

/// "float32, float64, ..." for error messages.
template <typename... Ts>
std::string TypeNames(TypeList<Ts...>) {
  std::string names;
  ((names += names.empty() ? "" : ", ", names += ElementTypeName(ElementTypeOf<Ts>::value)), ...);
  return names;
}

/// Calls fn(std::type_identity<T>{}) for the T in the list whose ElementType is
/// `type` and returns its status; InvalidArgument naming `what` (e.g.
/// "Sqrt node 'n': input X") and the allowed types when none matches.
template <typename... Ts, typename Fn>
absl::Status VisitType(TypeList<Ts...> list, ElementType type, std::string_view what, Fn&& fn) {
  absl::Status status;
  const bool found = ((type == ElementTypeOf<Ts>::value ? (status = fn(std::type_identity<Ts>{}), true) : false) || ...);
  if (!found)
    return absl::InvalidArgumentError(absl::StrCat(Sv(what), " has type ", ElementTypeName(type),
                                                   "; supported: ", TypeNames(list)));
  return status;
}

}  // namespace attune
