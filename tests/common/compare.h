// Output comparison as ONNX's backend runner does it: same dtype and shape,
// |actual - expected| <= atol + rtol * |expected| elementwise, NaN equal to NaN.
#pragma once

#include <string>

#include "attune/tensor.h"

namespace attune::testing {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

/// Empty string when the tensors match, else the first difference in words.
std::string CompareTensors(const Tensor& actual, const Tensor& expected, Tolerance tolerance = {});

/// Largest |a - e| over all elements (both must be float32 of one shape).
double MaxAbsDifference(const Tensor& a, const Tensor& b);

}  // namespace attune::testing
