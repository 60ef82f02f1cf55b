#include "ops/common/float_values.h"

#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/numeric.h"
#include "ops/common/type_dispatch.h"

namespace attune {

absl::StatusOr<std::vector<double>> LoadAsDoubles(const Tensor& tensor, std::string_view what) {
  std::vector<double> values(static_cast<size_t>(tensor.num_elements()));
  RETURN_IF_ERROR(VisitType(FloatTypes{}, tensor.type(), what, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    const StorageOf<T>* p = tensor.data<StorageOf<T>>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(Arith<T>::Load(p[i]));
    return absl::OkStatus();
  }));
  return values;
}

absl::Status StoreDoubles(const std::vector<double>& values, Tensor& out, std::string_view what) {
  if (static_cast<int64_t>(values.size()) != out.num_elements())
    return absl::InternalError(absl::StrCat(Sv(what), ": ", values.size(), " values for ", out.num_elements(), " elements"));
  return VisitType(FloatTypes{}, out.type(), what, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    StorageOf<T>* p = out.data<StorageOf<T>>();
    for (size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, double>) p[i] = values[i];
      else if constexpr (std::is_same_v<T, float>) p[i] = static_cast<float>(values[i]);
      else p[i] = Arith<T>::Store(DoubleToFloatRoundToOdd(values[i]));  // one rounding to the half type
    }
    return absl::OkStatus();
  });
}

bool IsFloatType(ElementType type) {
  return type == ElementType::kFloat32 || type == ElementType::kFloat64 || type == ElementType::kFloat16 ||
         type == ElementType::kBFloat16;
}

}  // namespace attune
