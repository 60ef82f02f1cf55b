// QuantizeLinear and DequantizeLinear against double-precision references:
// rounding half to even, saturation, NaN and inf, per tensor / axis / block,
// 8- and 16-bit types, float16 scales, and the load-time errors.
#include <limits>

#include "gtest/gtest.h"
#include "tests/quantize_ops/quantize_test_util.h"

namespace attune::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(QuantizeLinearTest, RoundsHalfToEvenAndSaturates) {
  const std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 3.4999f, 1000, -1000, kInf, -kInf, kNaN};
  for (int opset : {10, 13, 19, 21, 23}) {
    auto out = Call("QuantizeLinear", {Make<float>({11}, x), Tensor::Scalar(1.0f), Tensor::Scalar<int8_t>(1)}, opset);
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<int8_t> want;
    for (float v : x) want.push_back(static_cast<int8_t>(RefQuantize(v, 1, -128, 127)));
    EXPECT_EQ(Values<int8_t>((*out)[0]), want) << "opset " << opset;
  }
  // Without a zero point the output is uint8.
  auto u8 = Call("QuantizeLinear", {Make<float>({3}, {-1, 2.5f, 300}), Tensor::Scalar(1.0f)}, 13);
  ASSERT_TRUE(u8.ok());
  EXPECT_EQ(Values<uint8_t>((*u8)[0]), (std::vector<uint8_t>{0, 2, 255}));
}

TEST(QuantizeLinearTest, PerAxisMatchesReference) {
  const int64_t rows = 3, cols = 5;
  std::vector<float> x;
  for (int i = 0; i < rows * cols; ++i) x.push_back(static_cast<float>(i) * 0.37f - 2.0f);
  const std::vector<float> scale = {0.1f, 0.25f, 0.05f};
  const std::vector<uint8_t> zp = {128, 10, 250};
  auto out = Call("QuantizeLinear", {Make<float>({rows, cols}, x), Make<float>({3}, scale), Make<uint8_t>({3}, zp)},
                  13, Attrs({{"axis", int64_t{0}}}), {1, 2});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<uint8_t> want;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      want.push_back(static_cast<uint8_t>(RefQuantize(x[r * cols + c] / scale[r], zp[r], 0, 255)));
  EXPECT_EQ(Values<uint8_t>((*out)[0]), want);
}

TEST(QuantizeLinearTest, BlockedAndSixteenBit) {
  // x [2, 5] blocked on axis 1 with block 2: scales [2, 3].
  std::vector<float> x = {1, 2, 3, 4, 5, -1, -2, -3, -4, -5};
  std::vector<float> s = {0.5f, 1, 2, 0.25f, 0.5f, 4};
  std::vector<int16_t> zp = {0, 1, -1, 100, -100, 3};
  auto out = Call("QuantizeLinear", {Make<float>({2, 5}, x), Make<float>({2, 3}, s), Make<int16_t>({2, 3}, zp)}, 21,
                  Attrs({{"axis", int64_t{1}}, {"block_size", int64_t{2}}}));
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<int16_t> want;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 5; ++c) {
      const int si = r * 3 + c / 2;
      want.push_back(static_cast<int16_t>(RefQuantize(x[r * 5 + c] / s[si], zp[si], -32768, 32767)));
    }
  EXPECT_EQ(Values<int16_t>((*out)[0]), want);
  auto dq = Call("DequantizeLinear", {(*out)[0], Make<float>({2, 3}, s), Make<int16_t>({2, 3}, zp)}, 21,
                 Attrs({{"axis", int64_t{1}}, {"block_size", int64_t{2}}}));
  ASSERT_TRUE(dq.ok()) << dq.status();
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 5; ++c) {
      const int si = r * 3 + c / 2;
      EXPECT_EQ(Values<float>((*dq)[0])[r * 5 + c],
                static_cast<float>((static_cast<float>(want[r * 5 + c]) - static_cast<float>(zp[si])) * s[si]));
    }
}

TEST(QuantizeLinearTest, OutputDtypeAndUint16) {
  auto out = Call("QuantizeLinear", {Make<float>({3}, {-1, 70000, 12.5f}), Tensor::Scalar(1.0f)}, 21,
                  Attrs({{"output_dtype", int64_t{4}}}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<uint16_t>((*out)[0]), (std::vector<uint16_t>{0, 65535, 12}));
}

TEST(QuantizeLinearTest, HalfInputAndScaleDivideInHalf) {
  // 1/3 in float16 differs from float32's; the quotient is rounded to float16 first.
  const Tensor x = MakeHalf({4}, {1, 2, 100, -7});
  const Tensor s = MakeHalf({}, {0.3f});
  auto out = Call("QuantizeLinear", {x, s, Tensor::Scalar<int8_t>(0)}, 19);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<int8_t> want;
  for (float v : HalfValues(x)) {
    const float q = HalfToFloat(FloatToHalf(v / HalfToFloat(FloatToHalf(0.3f))));
    want.push_back(static_cast<int8_t>(RefQuantize(q, 0, -128, 127)));
  }
  EXPECT_EQ(Values<int8_t>((*out)[0]), want);
}

TEST(DequantizeLinearTest, PerTensorPerAxisAndHalfScale) {
  auto out = Call("DequantizeLinear", {Make<int8_t>({4}, {-128, -1, 0, 127}), Tensor::Scalar(0.5f),
                                       Tensor::Scalar<int8_t>(-1)},
                  10);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{-63.5f, 0, 0.5f, 64}));
  auto axis = Call("DequantizeLinear", {Make<uint8_t>({2, 2}, {0, 255, 10, 20}), Make<float>({2}, {2, 0.5f}),
                                        Make<uint8_t>({2}, {1, 20})},
                   13, Attrs({{"axis", int64_t{1}}}));
  ASSERT_TRUE(axis.ok()) << axis.status();
  EXPECT_EQ(Values<float>((*axis)[0]), (std::vector<float>{-2, 117.5f, 18, 0}));
  auto half = Call("DequantizeLinear", {Make<uint8_t>({2}, {3, 255}), MakeHalf({}, {0.1f})}, 19);
  ASSERT_TRUE(half.ok()) << half.status();
  const float s = HalfToFloat(FloatToHalf(0.1f));
  EXPECT_EQ(HalfValues((*half)[0]), (std::vector<float>{HalfToFloat(FloatToHalf(3 * s)),
                                                        HalfToFloat(FloatToHalf(255 * s))}));
  auto i32 = Call("DequantizeLinear", {Make<int32_t>({2}, {-1000000, 7}), Tensor::Scalar(0.25f)}, 13);
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_EQ(Values<float>((*i32)[0]), (std::vector<float>{-250000, 1.75f}));
}

TEST(QuantizeLinearTest, ThreadCountsGiveSameBits) {
  std::vector<float> x(100000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * 200.0f;
  auto one = Call("QuantizeLinear", {Make<float>({100000}, x), Tensor::Scalar(0.7f), Tensor::Scalar<int8_t>(3)}, 13,
                  {}, {}, 1, 1);
  auto two = Call("QuantizeLinear", {Make<float>({100000}, x), Tensor::Scalar(0.7f), Tensor::Scalar<int8_t>(3)}, 13,
                  {}, {}, 1, 2);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(Values<int8_t>((*one)[0]), Values<int8_t>((*two)[0]));
}

void ExpectError(const absl::StatusOr<std::vector<Tensor>>& out, const std::string& needle) {
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  EXPECT_NE(std::string(out.status().message()).find(needle), std::string::npos) << out.status();
  EXPECT_EQ(std::string(out.status().message()).find('\n'), std::string::npos);
}

TEST(QuantizeLinearTest, BadInputsAreOneLineErrorsAtLoad) {
  const Tensor w = Make<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  // Per-axis scale of the wrong length, both operands constant: refused by the factory.
  ExpectError(Call("DequantizeLinear", {w, Make<float>({2}, {1, 1})}, 13, Attrs({{"axis", int64_t{1}}}), {0, 1}),
              "per-axis scale has 3 elements");
  ExpectError(Call("DequantizeLinear", {w, Make<float>({3}, {1, 1, 1})}, 13, Attrs({{"axis", int64_t{2}}}), {0, 1}),
              "axis 2 is out of range");
  ExpectError(Call("DequantizeLinear", {w, Tensor::Scalar(1.0f), Tensor::Scalar<uint8_t>(0)}, 13, {}, {0, 1, 2}),
              "zero point (input 2) has type uint8 but x has type int8");
  ExpectError(Call("QuantizeLinear", {Make<float>({2}, {1, 2}), Tensor::Scalar(1.0f), Tensor::Scalar<int8_t>(0)}, 21,
                   Attrs({{"output_dtype", int64_t{2}}}), {1, 2}),
              "output_dtype is uint8");
  ExpectError(Call("DequantizeLinear", {w, Make<float>({2, 1}, {1, 1})}, 21,
                   Attrs({{"axis", int64_t{1}}, {"block_size", int64_t{2}}}), {0, 1}),
              "expected [2,2]");
  ExpectError(Call("QuantizeLinear", {Make<float>({2}, {1, 2}), Make<float>({2}, {1, 1})}, 10), "per tensor only");
}

}  // namespace
}  // namespace attune::testing
