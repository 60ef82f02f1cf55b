// Small helpers for hand-written kernel tests in tests/ops.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "tests/common/kernel_runner.h"

namespace attune::testing {

template <typename T>
Tensor Make(std::vector<int64_t> shape, std::vector<T> values) {
  auto t = Tensor::FromVector<T>(std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Tensor();
}
inline Tensor F32(std::vector<int64_t> shape, std::vector<float> v) { return Make<float>(std::move(shape), std::move(v)); }
inline Tensor I64(std::vector<int64_t> shape, std::vector<int64_t> v) { return Make<int64_t>(std::move(shape), std::move(v)); }
inline Tensor I32(std::vector<int64_t> shape, std::vector<int32_t> v) { return Make<int32_t>(std::move(shape), std::move(v)); }

/// 0, 1, 2, ... as float32 of the given shape.
inline Tensor Iota(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return F32(std::move(shape), std::move(v));
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  auto s = t.values<T>();
  return std::vector<T>(s.begin(), s.end());
}

inline absl::StatusOr<std::vector<Tensor>> RunOp(std::string op, int opset, Attributes attrs, std::vector<Tensor> inputs,
                                              int num_outputs = 1, int64_t max_bytes = kDefaultMaxTensorBytes) {
  KernelCall call;
  call.op_type = std::move(op);
  call.opset = opset;
  call.attributes = std::move(attrs);
  call.inputs = std::move(inputs);
  call.num_outputs = num_outputs;
  call.options.max_tensor_bytes = max_bytes;
  return RunKernel(call);
}

/// Runs a one-output op and returns the output; fails the test on an error.
inline Tensor Run1(std::string op, int opset, Attributes attrs, std::vector<Tensor> inputs) {
  auto out = RunOp(std::move(op), opset, std::move(attrs), std::move(inputs));
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

inline Attributes Attrs(std::initializer_list<std::pair<std::string, AttributeValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.Set(k, v);
  return a;
}

using Shape = std::vector<int64_t>;

inline bool MessageHas(const absl::Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

}  // namespace attune::testing
