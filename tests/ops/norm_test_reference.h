// Double-precision references for the normalization tests, written from the
// ONNX definitions independently of the kernels.
#pragma once

#include <cmath>
#include <vector>

#include "tests/ops/matmul_test_util.h"

namespace attune::testing {

/// numpy-broadcasts `values` of shape `from` to `to` (from must broadcast).
inline std::vector<double> BroadcastTo(const std::vector<int64_t>& from, const std::vector<double>& values,
                                       const std::vector<int64_t>& to) {
  std::vector<double> out(Count(to));
  const size_t offset = to.size() - from.size();
  for (int64_t i = 0; i < Count(to); ++i) {
    int64_t rest = i, src = 0, stride = 1;
    for (int d = static_cast<int>(to.size()) - 1; d >= 0; --d) {
      const int64_t coord = rest % to[d];
      rest /= to[d];
      if (d >= static_cast<int>(offset)) {
        const int64_t fd = from[d - offset];
        src += (fd == 1 ? 0 : coord) * stride;
        stride *= fd;
      }
    }
    out[i] = values[src];
  }
  return out;
}

struct NormReference {
  std::vector<double> y, mean, inv_std;
};

/// LayerNormalization (center = true) or RMSNormalization (center = false).
inline NormReference NaiveNorm(const std::vector<int64_t>& shape, const std::vector<double>& x, int64_t axis,
                               double epsilon, const std::vector<int64_t>& scale_shape,
                               const std::vector<double>& scale, const std::vector<int64_t>* bias_shape,
                               const std::vector<double>* bias, bool center) {
  if (axis < 0) axis += static_cast<int64_t>(shape.size());
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) (d < axis ? rows : cols) *= shape[d];
  const std::vector<double> s = BroadcastTo(scale_shape, scale, shape);
  const std::vector<double> b =
      bias != nullptr ? BroadcastTo(*bias_shape, *bias, shape) : std::vector<double>(x.size(), 0.0);
  NormReference ref;
  ref.y.resize(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0;
    if (center) {
      for (int64_t c = 0; c < cols; ++c) mean += x[r * cols + c];
      mean /= cols;
    }
    double var = 0;
    for (int64_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    var /= cols;
    const double inv = 1.0 / std::sqrt(var + epsilon);
    ref.mean.push_back(mean);
    ref.inv_std.push_back(inv);
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      ref.y[i] = (x[i] - mean) * inv * s[i] + b[i];
    }
  }
  return ref;
}

}  // namespace attune::testing
