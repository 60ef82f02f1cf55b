// Float tensors read into and written from double vectors, for reference-grade
// kernels (recurrences, signal transforms, geometry) that compute in double
// whatever the element type: float32, float64, float16 or bfloat16.
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attune/tensor.h"

namespace attune {

/// Every element of a float tensor as a double; InvalidArgument naming `what`
/// (e.g. "LSTM node 'l': input X") for any other element type.
absl::StatusOr<std::vector<double>> LoadAsDoubles(const Tensor& tensor, std::string_view what);

/// Writes `values` (one per element, rounded once) into the float tensor `out`.
absl::Status StoreDoubles(const std::vector<double>& values, Tensor& out, std::string_view what);

/// Whether `type` is one of the float types the two functions above take.
bool IsFloatType(ElementType type);

}  // namespace attune
