// ONNX RMSNormalization against the double-precision reference.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/kernel_runner.h"
#include "tests/ops/matmul_test_util.h"
#include "tests/ops/norm_test_reference.h"

namespace attune::testing {
namespace {

TEST(RmsNormTest, AllTypesAndShapes) {
  struct Case {
    std::vector<int64_t> x;
    int64_t axis;
    std::vector<int64_t> scale;
  };
  const std::vector<Case> cases = {{{4, 768}, -1, {768}}, {{2, 3, 5}, 1, {3, 5}}, {{2, 3, 5}, 0, {2, 3, 5}},
                                   {{3, 17}, -1, {17}},   {{2, 3, 4, 5}, 2, {5}}, {{2, 3, 4, 5}, -2, {3, 1, 1}},
                                   {{0, 4}, -1, {4}}};
  uint64_t seed = 1;
  for (ElementType type : {ElementType::kFloat32, ElementType::kFloat64, ElementType::kFloat16, ElementType::kBFloat16})
    for (const Case& c : cases)
      for (int threads : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << ElementTypeName(type) << " X " << ShapeToString(c.x) << " axis " << c.axis
                                          << " threads " << threads);
        const std::vector<double> x = Quantized(type, c.x, RandomValues(Count(c.x), seed++));
        const std::vector<double> s = Quantized(type, c.scale, RandomValues(Count(c.scale), seed++));
        const float epsilon = 1e-3f;
        const NormReference want = NaiveNorm(c.x, x, c.axis, epsilon, c.scale, s, nullptr, nullptr, false);
        KernelCall call;
        call.op_type = "RMSNormalization";
        call.opset = 23;
        call.attributes.Set("axis", c.axis);
        call.attributes.Set("epsilon", epsilon);
        call.inputs = {MakeTensor(type, c.x, x), MakeTensor(type, c.scale, s)};
        call.options.threads = threads;
        auto out = RunKernel(call);
        ASSERT_TRUE(out.ok()) << out.status();
        ASSERT_EQ((*out)[0].shape(), c.x);
        ASSERT_EQ((*out)[0].type(), type);
        const double tol = type == ElementType::kFloat64   ? 1e-12
                           : type == ElementType::kFloat32 ? 2e-6
                           : type == ElementType::kFloat16 ? 2e-3
                                                           : 1e-2;
        const std::vector<double> got = ToDoubles((*out)[0]);
        for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want.y[i], tol * (1 + std::abs(want.y[i]))) << i;
      }
}

// The rows of LayerNormTest.IllConditionedRowsMatchFloat64 (mean near 4000,
// spread 0.1): RMS divides by the root mean square, which is well conditioned
// there. The float32 sum of 768 squares carries about √768 rounding steps
// (≈ 3e-6 relative at worst): the bound is 4e-6, 30 float ulps at 1.0; builds
// measured 0.9e-6 (-O3) and 1.07e-6 (-O1, the sanitizer build).
TEST(RmsNormTest, LargeMeanRowsMatchFloat64) {
  const std::vector<int64_t> shape{16, 768};
  std::vector<double> x = RandomValues(Count(shape), 41);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 4000.0 + 1000.0 * static_cast<double>(i / 768) + 0.17 * x[i];
  x = Quantized(ElementType::kFloat32, shape, x);
  const std::vector<double> ones(768, 1.0);
  const NormReference want = NaiveNorm(shape, x, -1, 1e-5, {768}, ones, nullptr, nullptr, false);
  KernelCall call;
  call.op_type = "RMSNormalization";
  call.opset = 23;
  call.inputs = {MakeTensor(ElementType::kFloat32, shape, x), MakeTensor(ElementType::kFloat32, {768}, ones)};
  auto out = RunKernel(call);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> got = ToDoubles((*out)[0]);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want.y[i], 4e-6) << i;
}

// x = [3, 4]: mean square 12.5, y = x / sqrt(12.5) · scale.
TEST(RmsNormTest, HandComputed) {
  KernelCall call;
  call.op_type = "RMSNormalization";
  call.opset = 23;
  call.attributes.Set("epsilon", 0.0f);
  call.inputs = {*Tensor::FromVector<float>({1, 2}, {3, 4}), *Tensor::FromVector<float>({2}, {1, 2})};
  auto out = RunKernel(call);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> got = ToDoubles((*out)[0]);
  EXPECT_NEAR(got[0], 3 / std::sqrt(12.5), 1e-6);
  EXPECT_NEAR(got[1], 8 / std::sqrt(12.5), 1e-6);
}

TEST(RmsNormTest, ConcurrentRuns) {
  KernelCall call;
  call.op_type = "RMSNormalization";
  call.opset = 23;
  call.inputs = {MakeTensor(ElementType::kFloat32, {128, 200}, RandomValues(128 * 200, 1)),
                 MakeTensor(ElementType::kFloat32, {200}, RandomValues(200, 2))};
  call.options.threads = 2;
  auto outs = RunConcurrently(call, 4, 20);
  ASSERT_TRUE(outs.ok()) << outs.status();
  for (int t = 1; t < 4; ++t) EXPECT_EQ(ToDoubles((*outs)[t][0]), ToDoubles((*outs)[0][0]));
}

TEST(RmsNormTest, Errors) {
  KernelCall call;
  call.op_type = "RMSNormalization";
  call.opset = 23;
  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat32, {2})};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);
  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat16, {3})};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);
  call.inputs = {*Tensor::Create(ElementType::kInt64, {2, 3}), *Tensor::Create(ElementType::kInt64, {3})};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kUnimplemented);
  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat32, {3})};
  call.attributes.Set("axis", int64_t{5});
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);
  // Before opset 23 too: the RMS norm fusion writes the op into older models.
  call.attributes = {};
  call.opset = 17;
  EXPECT_TRUE(RunKernel(call).ok());
}

}  // namespace
}  // namespace attune::testing
