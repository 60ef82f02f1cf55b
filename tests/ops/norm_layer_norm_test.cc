// ONNX LayerNormalization against the double-precision reference.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/kernel_runner.h"
#include "tests/ops/matmul_test_util.h"
#include "tests/ops/norm_test_reference.h"

namespace attune::testing {
namespace {

struct LnCase {
  std::vector<int64_t> x;
  int64_t axis;
  std::vector<int64_t> scale;
  bool has_bias;
  float epsilon = 1e-5f;
};

double Tolerance(ElementType type) {
  switch (type) {
    case ElementType::kFloat64: return 1e-12;
    case ElementType::kFloat32: return 2e-5;
    case ElementType::kFloat16: return 4e-3;
    default: return 3e-2;  // bfloat16
  }
}

void CheckLayerNorm(ElementType type, const LnCase& c, int threads, uint64_t seed) {
  // An offset of 3 makes the mean matter (and tests the centred variance).
  std::vector<double> x = RandomValues(Count(c.x), seed);
  for (double& v : x) v = 3.0 + 2.0 * v;
  x = Quantized(type, c.x, x);
  const std::vector<double> scale = Quantized(type, c.scale, RandomValues(Count(c.scale), seed + 1));
  const std::vector<double> bias = Quantized(type, c.scale, RandomValues(Count(c.scale), seed + 2));
  const NormReference want =
      NaiveNorm(c.x, x, c.axis, c.epsilon, c.scale, scale, &c.scale, c.has_bias ? &bias : nullptr, true);

  KernelCall call;
  call.op_type = "LayerNormalization";
  call.opset = 17;
  call.attributes.Set("axis", c.axis);
  call.attributes.Set("epsilon", c.epsilon);
  call.inputs = {MakeTensor(type, c.x, x), MakeTensor(type, c.scale, scale)};
  if (c.has_bias) call.inputs.push_back(MakeTensor(type, c.scale, bias));
  call.num_outputs = 3;
  call.options.threads = threads;
  auto out = RunKernel(call);
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.type(), type);
  ASSERT_EQ(y.shape(), c.x);
  const std::vector<double> got = ToDoubles(y);
  const double tol = Tolerance(type);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want.y[i], tol * (1 + std::abs(want.y[i]))) << i;

  const int64_t axis = c.axis < 0 ? c.axis + static_cast<int64_t>(c.x.size()) : c.axis;
  std::vector<int64_t> stat_shape(c.x.begin(), c.x.begin() + axis);
  stat_shape.resize(c.x.size(), 1);
  const double stat_tol = type == ElementType::kFloat64 ? 1e-7 : 1e-5;  // stored as float32
  for (int o : {1, 2}) {
    const Tensor& stat = (*out)[o];
    ASSERT_EQ(stat.type(), ElementType::kFloat32);  // stash_type defaults to float32
    ASSERT_EQ(stat.shape(), stat_shape);
    const std::vector<double> values = ToDoubles(stat);
    const std::vector<double>& ref = o == 1 ? want.mean : want.inv_std;
    for (size_t i = 0; i < values.size(); ++i) ASSERT_NEAR(values[i], ref[i], stat_tol * (1 + std::abs(ref[i]))) << i;
  }
}

const std::vector<LnCase>& Cases() {
  static const std::vector<LnCase> cases = {
      {{4, 768}, -1, {768}, true},
      {{2, 3, 5}, -1, {5}, true},
      {{2, 3, 5}, 1, {3, 5}, true},
      {{2, 3, 5}, 0, {2, 3, 5}, false},
      {{3, 17}, -1, {17}, false, 1e-3f},
      {{2, 3, 4, 5}, 2, {4, 5}, true},
      {{2, 3, 4, 5}, -3, {1, 4, 5}, true},  // leading 1 in Scale
      {{2, 3, 4, 5}, 2, {5}, true},         // Scale broadcast over one normalized dim
      {{2, 3, 4, 5}, 2, {3, 1, 5}, true},   // Scale varying over rows
      {{7, 1}, -1, {1}, true},              // one feature: y = bias
      {{0, 8}, -1, {8}, true},              // no rows
      {{33, 129}, -1, {129}, true},
  };
  return cases;
}

TEST(LayerNormTest, AllTypesAndShapes) {
  uint64_t seed = 1;
  for (ElementType type : {ElementType::kFloat32, ElementType::kFloat64, ElementType::kFloat16, ElementType::kBFloat16})
    for (const LnCase& c : Cases())
      for (int threads : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << ElementTypeName(type) << " X " << ShapeToString(c.x) << " axis " << c.axis
                                          << " Scale " << ShapeToString(c.scale) << " threads " << threads);
        CheckLayerNorm(type, c, threads, seed++);
      }
}

// Values worked out by hand: x = [1, 2, 3, 4], mean 2.5, variance 1.25.
TEST(LayerNormTest, HandComputed) {
  KernelCall call;
  call.op_type = "LayerNormalization";
  call.opset = 17;
  call.attributes.Set("epsilon", 0.0f);
  call.inputs = {*Tensor::FromVector<float>({1, 4}, {1, 2, 3, 4}), *Tensor::FromVector<float>({4}, {1, 1, 2, 2}),
                 *Tensor::FromVector<float>({4}, {0, 1, 0, 1})};
  call.num_outputs = 3;
  auto out = RunKernel(call);
  ASSERT_TRUE(out.ok()) << out.status();
  const double inv = 1.0 / std::sqrt(1.25);
  const std::vector<double> want{-1.5 * inv, -0.5 * inv + 1, 0.5 * inv * 2, 1.5 * inv * 2 + 1};
  const std::vector<double> got = ToDoubles((*out)[0]);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], want[i], 1e-6);
  EXPECT_NEAR(ToDoubles((*out)[1])[0], 2.5, 1e-7);
  EXPECT_NEAR(ToDoubles((*out)[2])[0], inv, 1e-6);
}

// Rows whose mean is large against their spread (mean near 4000, standard
// deviation near 0.1): the centred values must keep float precision. The
// output is already in units of the row's standard deviation, so the bound is
// relative to it. Measured: 1.3e-6 with one thread and two.
TEST(LayerNormTest, IllConditionedRowsMatchFloat64) {
  const std::vector<int64_t> shape{16, 768};
  std::vector<double> x = RandomValues(Count(shape), 41);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 4000.0 + 1000.0 * static_cast<double>(i / 768) + 0.17 * x[i];
  x = Quantized(ElementType::kFloat32, shape, x);
  const std::vector<double> ones(768, 1.0), zeros(768, 0.0);
  const NormReference want = NaiveNorm(shape, x, -1, 1e-5, {768}, ones, nullptr, nullptr, true);
  for (int threads : {1, 2}) {
    KernelCall call;
    call.op_type = "LayerNormalization";
    call.opset = 17;
    call.inputs = {MakeTensor(ElementType::kFloat32, shape, x), MakeTensor(ElementType::kFloat32, {768}, ones),
                   MakeTensor(ElementType::kFloat32, {768}, zeros)};
    call.num_outputs = 2;
    call.options.threads = threads;
    auto out = RunKernel(call);
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> got = ToDoubles((*out)[0]);
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want.y[i]));
    std::cout << "ill-conditioned rows, threads " << threads << ": max |error| " << worst << "\n";
    EXPECT_LE(worst, 1e-4) << "threads " << threads;
    const std::vector<double> mean = ToDoubles((*out)[1]);
    for (int64_t r = 0; r < shape[0]; ++r) EXPECT_NEAR(mean[r], want.mean[r], 1e-3) << r;  // float32 of ~4000
  }
}

TEST(LayerNormTest, StashTypeDoubleAndOmittedOutputs) {
  KernelCall call;
  call.op_type = "LayerNormalization";
  call.opset = 17;
  call.attributes.Set("stash_type", int64_t{11});
  const std::vector<double> x = Quantized(ElementType::kFloat32, {3, 10}, RandomValues(30, 5));
  const std::vector<double> s = Quantized(ElementType::kFloat32, {10}, RandomValues(10, 6));
  call.inputs = {MakeTensor(ElementType::kFloat32, {3, 10}, x), MakeTensor(ElementType::kFloat32, {10}, s)};
  call.num_outputs = 2;
  auto out = RunKernel(call);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[1].type(), ElementType::kFloat64);
  const NormReference want = NaiveNorm({3, 10}, x, -1, 1e-5f, {10}, s, nullptr, nullptr, true);
  const std::vector<double> mean = ToDoubles((*out)[1]);
  for (int r = 0; r < 3; ++r) EXPECT_NEAR(mean[r], want.mean[r], 1e-12);
}

TEST(LayerNormTest, ConcurrentRuns) {
  const std::vector<int64_t> shape{64, 300};
  KernelCall call;
  call.op_type = "LayerNormalization";
  call.opset = 17;
  call.inputs = {MakeTensor(ElementType::kFloat32, shape, RandomValues(Count(shape), 1)),
                 MakeTensor(ElementType::kFloat32, {300}, RandomValues(300, 2)),
                 MakeTensor(ElementType::kFloat32, {300}, RandomValues(300, 3))};
  call.num_outputs = 3;
  call.options.threads = 2;
  auto outs = RunConcurrently(call, 4, 20);
  ASSERT_TRUE(outs.ok()) << outs.status();
  for (int t = 1; t < 4; ++t)
    for (int o = 0; o < 3; ++o) EXPECT_EQ(ToDoubles((*outs)[t][o]), ToDoubles((*outs)[0][o])) << t << " " << o;
}

TEST(LayerNormTest, Errors) {
  KernelCall call;
  call.op_type = "LayerNormalization";
  call.opset = 17;
  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat32, {4})};
  auto bad_scale = RunKernel(call);
  ASSERT_FALSE(bad_scale.ok());
  EXPECT_EQ(bad_scale.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_scale.status().message().find("[4]"), absl::string_view::npos) << bad_scale.status();

  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat32, {3}),
                 *Tensor::Create(ElementType::kFloat32, {2, 2, 3})};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);

  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat64, {3})};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);

  call.inputs = {*Tensor::Create(ElementType::kInt32, {2, 3}), *Tensor::Create(ElementType::kInt32, {3})};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kUnimplemented);

  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat32, {3})};
  call.attributes.Set("axis", int64_t{2});
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);
  call.attributes.Set("axis", int64_t{-3});
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);

  call.attributes = Attributes();
  call.inputs = {Tensor::Scalar(1.0f), Tensor::Scalar(1.0f)};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);

  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat32, {3})};
  call.attributes.Set("stash_type", int64_t{6});
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kUnimplemented);
  // Below opset 17 it has opset 17's meaning (ONNX Runtime's op of the same
  // name), so the same errors hold there.
  call.opset = 16;
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kUnimplemented);
  call.attributes = Attributes();
  EXPECT_TRUE(RunKernel(call).ok());
}

}  // namespace
}  // namespace attune::testing
