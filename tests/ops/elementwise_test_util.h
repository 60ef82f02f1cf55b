// Helpers for the element-wise kernel tests: building tensors, running one op.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/attribute.h"
#include "gtest/gtest.h"
#include "tests/common/kernel_runner.h"

namespace attune::testing {

template <typename T>
Tensor Make(std::vector<int64_t> shape, const std::vector<T>& values) {
  auto t = Tensor::FromVector(std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

inline Tensor MakeBool(std::vector<int64_t> shape, const std::vector<int>& values) {
  std::vector<bool> b(values.begin(), values.end());
  return Make<bool>(std::move(shape), b);
}

inline Tensor MakeHalf(std::vector<int64_t> shape, const std::vector<float>& values) {
  std::vector<Float16> h;
  for (float v : values) h.push_back(FloatToHalf(v));
  return Make<Float16>(std::move(shape), h);
}

/// Runs op on inputs and returns output 0.
inline absl::StatusOr<Tensor> RunOp(const std::string& op, std::vector<Tensor> inputs, int opset = 17,
                                    Attributes attributes = {}, int threads = 1) {
  KernelCall call;
  call.op_type = op;
  call.opset = opset;
  call.attributes = std::move(attributes);
  call.inputs = std::move(inputs);
  call.options.threads = threads;
  auto outputs = RunKernel(call);
  if (!outputs.ok()) return outputs.status();
  return (*outputs)[0];
}

/// The elements of t as T (bool tensors read as 0/1 ints via T = int).
template <typename T>
std::vector<T> Values(const Tensor& t) {
  if (t.type() == ElementType::kBool) {
    std::vector<T> out;
    for (int64_t i = 0; i < t.num_elements(); ++i) out.push_back(static_cast<T>(t.data<uint8_t>()[i]));
    return out;
  }
  EXPECT_EQ(t.type(), ElementTypeOf<T>::value);
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

inline std::vector<float> HalfValues(const Tensor& t) {
  EXPECT_EQ(t.type(), ElementType::kFloat16);
  std::vector<float> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) out.push_back(HalfToFloat(t.data<Float16>()[i]));
  return out;
}

inline Attributes Attrs(std::initializer_list<std::pair<std::string, AttributeValue>> list) {
  Attributes a;
  for (const auto& [name, value] : list) a.Set(name, value);
  return a;
}

/// Element-wise closeness with NaN == NaN.
template <typename T>
void ExpectNear(const std::vector<T>& actual, const std::vector<T>& expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(static_cast<double>(expected[i]))) {
      EXPECT_TRUE(std::isnan(static_cast<double>(actual[i]))) << "at " << i << ": " << actual[i];
    } else if (actual[i] != expected[i]) {  // also covers matching infinities
      EXPECT_NEAR(actual[i], expected[i], tolerance) << "at " << i;
    }
  }
}

}  // namespace attune::testing
