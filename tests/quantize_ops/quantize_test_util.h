// Helpers of the quantization op tests: one kernel call with chosen constant
// inputs, and the double-precision references the kernels are checked against.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/common/kernel_runner.h"
#include "tests/ops/elementwise_test_util.h"

namespace attune::testing {

inline absl::StatusOr<std::vector<Tensor>> Call(const std::string& op, std::vector<Tensor> inputs, int opset,
                                                Attributes attrs = {}, std::vector<int> constants = {},
                                                int outputs = 1, int threads = 1, const std::string& domain = "") {
  KernelCall call;
  call.op_type = op;
  call.domain = domain;
  call.opset = opset;
  call.attributes = std::move(attrs);
  call.inputs = std::move(inputs);
  call.num_outputs = outputs;
  call.constant_inputs = std::move(constants);
  call.options.threads = threads;
  return RunKernel(call);
}

/// round-half-to-even(q) + zp saturated to [lo, hi], in double (NaN: lo).
inline int64_t RefQuantize(double q, int64_t zp, int64_t lo, int64_t hi) {
  if (std::isnan(q)) return lo;
  double r = std::nearbyint(q) + static_cast<double>(zp);
  if (r < lo) return lo;
  if (r > hi) return hi;
  return static_cast<int64_t>(r);
}

/// Σ_k (a − za[m])(b − zb[n]) over int64, for [m, k] · [k, n] row-major operands.
template <typename A, typename B>
std::vector<int64_t> RefIntegerProduct(const std::vector<A>& a, const std::vector<B>& b, int64_t m, int64_t k,
                                       int64_t n, const std::vector<int64_t>& za, const std::vector<int64_t>& zb) {
  std::vector<int64_t> out(static_cast<size_t>(m * n), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = 0;
      const int64_t zai = za.empty() ? 0 : za[za.size() == 1 ? 0 : i];
      const int64_t zbj = zb.empty() ? 0 : zb[zb.size() == 1 ? 0 : j];
      for (int64_t p = 0; p < k; ++p) s += (int64_t{a[i * k + p]} - zai) * (int64_t{b[p * n + j]} - zbj);
      out[i * n + j] = s;
    }
  return out;
}

}  // namespace attune::testing
