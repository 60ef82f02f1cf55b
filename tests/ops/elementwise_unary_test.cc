// Unary element-wise kernels and activations; expected values are from the
// functions' definitions (computed once in double precision by hand/libm).
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "tests/ops/elementwise_test_util.h"

namespace attune::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> RunFloat(const std::string& op, const std::vector<float>& x, int opset = 13,
                            Attributes attrs = {}) {
  auto out = RunOp(op, {Make<float>({static_cast<int64_t>(x.size())}, x)}, opset, std::move(attrs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? Values<float>(*out) : std::vector<float>{};
}

TEST(ElementwiseUnaryTest, BasicMath) {
  ExpectNear(RunFloat("Sqrt", {4, 2, 0, -1}), {2, 1.41421356f, 0, kNaN}, 1e-6);
  ExpectNear(RunFloat("Exp", {0, 1, -kInf}), {1, 2.71828183f, 0}, 1e-6);
  ExpectNear(RunFloat("Log", {1, 2, 0}), {0, 0.69314718f, -kInf}, 1e-6);
  ExpectNear(RunFloat("Erf", {0, 0.5f, -0.5f, 10}), {0, 0.52049988f, -0.52049988f, 1}, 1e-6);
  ExpectNear(RunFloat("Tanh", {0, 1, -1}), {0, 0.76159416f, -0.76159416f}, 1e-6);
  ExpectNear(RunFloat("Sigmoid", {0, 2, -100, 100}), {0.5f, 0.88079708f, 0, 1}, 1e-6);
  ExpectNear(RunFloat("Reciprocal", {2, -4, 0}), {0.5f, -0.25f, kInf}, 0);
  ExpectNear(RunFloat("Neg", {1, -2, 0}), {-1, 2, 0}, 0);
  ExpectNear(RunFloat("Abs", {-1.5f, 2, -kInf}), {1.5f, 2, kInf}, 0);
  ExpectNear(RunFloat("Sin", {0, 1}, 7), {0, 0.84147098f}, 1e-6);
  ExpectNear(RunFloat("Cos", {0, 1}, 7), {1, 0.54030231f}, 1e-6);
}

TEST(ElementwiseUnaryTest, Rounding) {
  ExpectNear(RunFloat("Floor", {1.5f, -1.5f, 2}), {1, -2, 2}, 0);
  ExpectNear(RunFloat("Ceil", {1.5f, -1.5f, 2}), {2, -1, 2}, 0);
  // Halves go to the even neighbour (ONNX Round examples).
  ExpectNear(RunFloat("Round", {0.9f, 2.5f, 2.3f, 1.5f, -4.5f, -0.4f}, 11), {1, 2, 2, 2, -4, -0.0f}, 0);
}

TEST(ElementwiseUnaryTest, Sign) {
  ExpectNear(RunFloat("Sign", {-3, 0, 2.5f, kNaN}), {-1, 0, 1, kNaN}, 0);
  auto ints = RunOp("Sign", {Make<int32_t>({3}, {-7, 0, 9})}, 13);
  ASSERT_TRUE(ints.ok());
  EXPECT_EQ(Values<int32_t>(*ints), (std::vector<int32_t>{-1, 0, 1}));
  auto u = RunOp("Sign", {Make<uint8_t>({2}, {0, 200})}, 13);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Values<uint8_t>(*u), (std::vector<uint8_t>{0, 1}));
}

TEST(ElementwiseUnaryTest, IntegerAbsNeg) {
  auto abs8 = RunOp("Abs", {Make<int8_t>({3}, {-5, 5, -128})}, 13);
  ASSERT_TRUE(abs8.ok());
  EXPECT_EQ(Values<int8_t>(*abs8), (std::vector<int8_t>{5, 5, -128}));  // -128 wraps
  auto neg = RunOp("Neg", {Make<int64_t>({2}, {3, -4})}, 13);
  ASSERT_TRUE(neg.ok());
  EXPECT_EQ(Values<int64_t>(*neg), (std::vector<int64_t>{-3, 4}));
  auto neg_unsigned = RunOp("Neg", {Make<uint8_t>({1}, {1})}, 13);
  ASSERT_FALSE(neg_unsigned.ok());
  EXPECT_EQ(neg_unsigned.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseUnaryTest, IsNaNAndIsInf) {
  const Tensor x = Make<float>({4}, {1, kNaN, kInf, -kInf});
  auto nan = RunOp("IsNaN", {x}, 13);
  ASSERT_TRUE(nan.ok());
  EXPECT_EQ(nan->type(), ElementType::kBool);
  EXPECT_EQ(Values<int>(*nan), (std::vector<int>{0, 1, 0, 0}));
  auto inf = RunOp("IsInf", {x}, 10);
  auto pos = RunOp("IsInf", {x}, 20, Attrs({{"detect_negative", int64_t{0}}}));
  auto neg = RunOp("IsInf", {x}, 20, Attrs({{"detect_positive", int64_t{0}}}));
  ASSERT_TRUE(inf.ok() && pos.ok() && neg.ok());
  EXPECT_EQ(Values<int>(*inf), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(Values<int>(*pos), (std::vector<int>{0, 0, 1, 0}));
  EXPECT_EQ(Values<int>(*neg), (std::vector<int>{0, 0, 0, 1}));
  auto half = RunOp("IsNaN", {MakeHalf({2}, {kNaN, 1})}, 20);
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(Values<int>(*half), (std::vector<int>{1, 0}));
}

TEST(ElementwiseUnaryTest, Float16AndDouble) {
  auto half = RunOp("Sqrt", {MakeHalf({2}, {4, 2})}, 13);
  ASSERT_TRUE(half.ok());
  // sqrt(2) = 1.41421356 rounds to the half 1.4140625.
  EXPECT_EQ(HalfValues(*half), (std::vector<float>{2, 1.4140625f}));
  auto dbl = RunOp("Exp", {Make<double>({1}, {1.0})}, 13);
  ASSERT_TRUE(dbl.ok());
  EXPECT_DOUBLE_EQ(Values<double>(*dbl)[0], 2.718281828459045);
}

TEST(ElementwiseUnaryTest, FloatOnlyOpsRejectIntegers) {
  auto out = RunOp("Sqrt", {Make<int32_t>({1}, {4})}, 13);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("int32"), std::string::npos);
}

TEST(ElementwiseUnaryTest, ErfOnIntegers) {
  auto out = RunOp("Erf", {Make<int32_t>({3}, {0, 3, -3})}, 13);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>(*out), (std::vector<int32_t>{0, 0, 0}));  // erf(3) = 0.99998 truncates
}

TEST(ElementwiseUnaryTest, LargeMultiThreaded) {
  std::vector<float> x(100000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  auto out = RunOp("Relu", {Make<float>({static_cast<int64_t>(x.size())}, x)}, 14, {}, 2);
  ASSERT_TRUE(out.ok());
  const auto v = Values<float>(*out);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(v[i], std::max(0.0f, static_cast<float>(i % 7) - 3.0f));
}

TEST(ElementwiseActivationTest, Relu) {
  ExpectNear(RunFloat("Relu", {-1, 0, 2, kNaN}, 14), {0, 0, 2, kNaN}, 0);
  auto ints = RunOp("Relu", {Make<int8_t>({3}, {-3, 0, 5})}, 14);
  ASSERT_TRUE(ints.ok());
  EXPECT_EQ(Values<int8_t>(*ints), (std::vector<int8_t>{0, 0, 5}));
}

TEST(ElementwiseActivationTest, Gelu) {
  ExpectNear(RunFloat("Gelu", {1, -1, 2, 0}, 20), {0.84134475f, -0.15865525f, 1.95449974f, 0}, 1e-6);
  ExpectNear(RunFloat("Gelu", {1, -1, 2}, 20, Attrs({{"approximate", std::string("tanh")}})),
             {0.84119199f, -0.15880801f, 1.95459769f}, 1e-6);
  auto bad = RunOp("Gelu", {Make<float>({1}, {1})}, 20, Attrs({{"approximate", std::string("fast")}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseActivationTest, ParameterisedActivations) {
  ExpectNear(RunFloat("LeakyRelu", {-2, 3}, 16), {-0.02f, 3}, 1e-7);
  ExpectNear(RunFloat("LeakyRelu", {-2, 3}, 16, Attrs({{"alpha", 0.5f}})), {-1, 3}, 0);
  ExpectNear(RunFloat("HardSigmoid", {-10, 0, 1, 10}, 6), {0, 0.5f, 0.7f, 1}, 1e-7);
  ExpectNear(RunFloat("HardSigmoid", {1}, 6, Attrs({{"alpha", 0.5f}, {"beta", 0.25f}})), {0.75f}, 0);
  ExpectNear(RunFloat("Softplus", {1, -1, 100, -100}, 1), {1.31326169f, 0.31326169f, 100, 0}, 1e-6);
  ExpectNear(RunFloat("Softsign", {1, -3}, 1), {0.5f, -0.75f}, 0);
  ExpectNear(RunFloat("Elu", {-1, 2}, 6), {-0.63212056f, 2}, 1e-6);
  ExpectNear(RunFloat("Selu", {-1, 2}, 6), {-1.11133074f, 2.10140204f}, 1e-6);
  ExpectNear(RunFloat("Celu", {-1, 2}, 12), {-0.63212056f, 2}, 1e-6);
  ExpectNear(RunFloat("HardSwish", {-4, 1, 4}, 14), {0, 0.66666667f, 4}, 1e-6);
  ExpectNear(RunFloat("Mish", {1, 0}, 18), {0.86509839f, 0}, 1e-6);
  ExpectNear(RunFloat("ThresholdedRelu", {0.5f, 1, 2}, 10), {0, 0, 2}, 0);
}

TEST(ElementwiseActivationTest, PRelu) {
  auto out = RunOp("PRelu", {Make<float>({2, 2}, {-1, 2, -3, 4}), Make<float>({2}, {0.5f, 0.25f})}, 16);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>(*out), (std::vector<float>{-0.5f, 2, -1.5f, 4}));
  // Slope must broadcast to X, not the other way round.
  auto bad = RunOp("PRelu", {Make<float>({2}, {-1, 2}), Make<float>({2, 2}, {1, 1, 1, 1})}, 16);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace attune::testing
