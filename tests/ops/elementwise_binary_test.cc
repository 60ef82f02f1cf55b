// Binary element-wise kernels: arithmetic, Pow, Mod, comparisons, logic, and
// the variadic Min/Max/Sum/Mean, with hand-computed expectations.
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "tests/ops/elementwise_test_util.h"

namespace attune::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ElementwiseAddTest, SameShape) {
  auto out = RunOp("Add", {Make<float>({2, 2}, {1, 2, 3, 4}), Make<float>({2, 2}, {10, 20, 30, 40})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values<float>(*out), (std::vector<float>{11, 22, 33, 44}));
}

TEST(ElementwiseAddTest, RowVectorBothOrders) {
  const Tensor m = Make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor row = Make<float>({3}, {10, 20, 30});
  auto a = RunOp("Add", {m, row});
  auto b = RunOp("Sub", {row, m});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Values<float>(*a), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(Values<float>(*b), (std::vector<float>{9, 18, 27, 6, 15, 24}));
}

TEST(ElementwiseAddTest, OuterBroadcastOnesOnBothSides) {
  auto out = RunOp("Mul", {Make<float>({2, 1}, {1, 2}), Make<float>({1, 3}, {1, 10, 100})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<float>(*out), (std::vector<float>{1, 10, 100, 2, 20, 200}));
}

TEST(ElementwiseAddTest, ScalarOperands) {
  auto out = RunOp("Sub", {Tensor::Scalar(10.0f), Make<float>({3}, {1, 2, 3})});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(Values<float>(*out), (std::vector<float>{9, 8, 7}));

  auto both = RunOp("Add", {Tensor::Scalar(1.5), Tensor::Scalar(2.0)});
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->rank(), 0);
  EXPECT_EQ(Values<double>(*both), (std::vector<double>{3.5}));

  auto ones = RunOp("Add", {Make<float>({1}, {1}), Make<float>({1, 1}, {2})});
  ASSERT_TRUE(ones.ok());
  EXPECT_EQ(ones->shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(Values<float>(*ones), (std::vector<float>{3}));
}

TEST(ElementwiseAddTest, ZeroSizedDims) {
  auto out = RunOp("Add", {Make<float>({0, 3}, {}), Make<float>({1, 3}, {1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), (std::vector<int64_t>{0, 3}));
  auto with_scalar = RunOp("Mul", {Make<int64_t>({2, 0}, {}), Tensor::Scalar<int64_t>(3)});
  ASSERT_TRUE(with_scalar.ok());
  EXPECT_EQ(with_scalar->shape(), (std::vector<int64_t>{2, 0}));
}

TEST(ElementwiseAddTest, MismatchedTypesAreInvalidArgument) {
  auto out = RunOp("Add", {Make<float>({2}, {1, 2}), Make<int64_t>({2}, {1, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("int64"), std::string::npos) << out.status();
  EXPECT_NE(out.status().message().find("float32"), std::string::npos) << out.status();
}

TEST(ElementwiseAddTest, UnsupportedTypeIsInvalidArgument) {
  auto out = RunOp("Add", {MakeBool({1}, {1}), MakeBool({1}, {0})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseAddTest, IncompatibleShapes) {
  auto out = RunOp("Add", {Make<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Make<float>({4}, {1, 2, 3, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("shapes [2, 3] and [4] cannot broadcast"), std::string::npos)
      << out.status();
}

TEST(ElementwiseAddTest, MissingInput) {
  auto out = RunOp("Add", {Make<float>({1}, {1})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseAddTest, IntegerOverflowWraps) {
  auto add = RunOp("Add", {Make<int32_t>({1}, {std::numeric_limits<int32_t>::max()}), Make<int32_t>({1}, {1})});
  ASSERT_TRUE(add.ok());
  EXPECT_EQ(Values<int32_t>(*add)[0], std::numeric_limits<int32_t>::min());
  auto mul = RunOp("Mul", {Make<uint8_t>({2}, {200, 16}), Make<uint8_t>({2}, {2, 16})});
  ASSERT_TRUE(mul.ok());
  EXPECT_EQ(Values<uint8_t>(*mul), (std::vector<uint8_t>{144, 0}));
  auto mul16 = RunOp("Mul", {Make<uint16_t>({1}, {65535}), Make<uint16_t>({1}, {65535})});
  ASSERT_TRUE(mul16.ok());
  EXPECT_EQ(Values<uint16_t>(*mul16)[0], 1);
  auto sub8 = RunOp("Sub", {Make<int8_t>({1}, {-128}), Make<int8_t>({1}, {1})}, 14);
  ASSERT_TRUE(sub8.ok());
  EXPECT_EQ(Values<int8_t>(*sub8)[0], 127);
}

TEST(ElementwiseAddTest, Float16ComputesInFloatAndRounds) {
  auto out = RunOp("Add", {MakeHalf({3}, {1.5f, 2048.0f, 0.1f}), MakeHalf({3}, {0.25f, 1.0f, 0.2f})});
  ASSERT_TRUE(out.ok()) << out.status();
  // 2048 + 1 = 2049 lies halfway between halves 2048 and 2050: ties to even.
  // 0.1 and 0.2 as halves are 0.0999755859375 and 0.199951171875; their sum
  // 0.2999267578125 is halfway between 0.2998046875 and 0.300048828125: even wins.
  EXPECT_EQ(HalfValues(*out), (std::vector<float>{1.75f, 2048.0f, 0.2998046875f}));
}

TEST(ElementwiseAddTest, BFloat16) {
  std::vector<BFloat16> a = {FloatToBFloat16(1.0f), FloatToBFloat16(3.0f)};
  std::vector<BFloat16> b = {FloatToBFloat16(2.0f), FloatToBFloat16(-0.5f)};
  auto out = RunOp("Mul", {Make<BFloat16>({2}, a), Make<BFloat16>({2}, b)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(BFloat16ToFloat(out->data<BFloat16>()[0]), 2.0f);
  EXPECT_EQ(BFloat16ToFloat(out->data<BFloat16>()[1]), -1.5f);
}

TEST(ElementwiseAddTest, LargeBroadcastMultiThreaded) {
  const int64_t rows = 1000, cols = 513;  // odd row length: ranges split mid-row
  std::vector<float> m(rows * cols), row(cols);
  for (int64_t i = 0; i < rows * cols; ++i) m[i] = static_cast<float>(i);
  for (int64_t j = 0; j < cols; ++j) row[j] = static_cast<float>(-j);
  auto out = RunOp("Add", {Make<float>({rows, cols}, m), Make<float>({cols}, row)}, 14, {}, /*threads=*/2);
  ASSERT_TRUE(out.ok());
  const auto v = Values<float>(*out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) ASSERT_EQ(v[r * cols + j], static_cast<float>(r * cols)) << r << "," << j;
}

TEST(ElementwiseDivTest, IntegerTruncatesTowardZero) {
  auto out = RunOp("Div", {Make<int32_t>({4}, {7, -7, 7, -7}), Make<int32_t>({4}, {2, 2, -2, -2})});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Values<int32_t>(*out), (std::vector<int32_t>{3, -3, -3, 3}));
}

TEST(ElementwiseDivTest, IntegerEdgeCasesDoNotTrap) {
  const int64_t min = std::numeric_limits<int64_t>::min();
  auto out = RunOp("Div", {Make<int64_t>({2}, {5, min}), Make<int64_t>({2}, {0, -1})});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Values<int64_t>(*out), (std::vector<int64_t>{0, min}));
}

TEST(ElementwiseDivTest, FloatByZero) {
  auto out = RunOp("Div", {Make<float>({3}, {1, -1, 0}), Make<float>({3}, {0, 0, 0})});
  ASSERT_TRUE(out.ok());
  const auto v = Values<float>(*out);
  EXPECT_EQ(v[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(v[2]));
}

TEST(ElementwiseModTest, IntegerModTakesDivisorSign) {
  auto out = RunOp("Mod", {Make<int32_t>({4}, {-4, 4, -4, 5}), Make<int32_t>({4}, {3, -3, -3, 0})}, 13);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>(*out), (std::vector<int32_t>{2, -2, -1, 0}));
}

TEST(ElementwiseModTest, FmodTakesDividendSign) {
  auto ints = RunOp("Mod", {Make<int64_t>({3}, {-4, 4, -4}), Make<int64_t>({3}, {3, -3, -3})}, 13,
                    Attrs({{"fmod", int64_t{1}}}));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ(Values<int64_t>(*ints), (std::vector<int64_t>{-1, 1, -1}));
  auto floats = RunOp("Mod", {Make<float>({2}, {-4.5f, 4.5f}), Make<float>({2}, {2, -2})}, 13,
                      Attrs({{"fmod", int64_t{1}}}));
  ASSERT_TRUE(floats.ok());
  EXPECT_EQ(Values<float>(*floats), (std::vector<float>{-0.5f, 0.5f}));
}

TEST(ElementwiseModTest, FloatWithoutFmodIsInvalid) {
  auto out = RunOp("Mod", {Make<float>({1}, {1}), Make<float>({1}, {2})}, 13);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwisePowTest, FloatBroadcast) {
  auto out = RunOp("Pow", {Make<float>({2, 2}, {1, 2, 3, 4}), Make<float>({2}, {2, 0.5f})}, 15);
  ASSERT_TRUE(out.ok());
  ExpectNear(Values<float>(*out), {1, 1.41421356f, 9, 2}, 1e-6);
}

TEST(ElementwisePowTest, SquareFastPathMatchesDefinition) {
  auto out = RunOp("Pow", {Make<float>({3}, {-3, 0.5f, kNaN}), Tensor::Scalar(2.0f)}, 15);
  ASSERT_TRUE(out.ok());
  ExpectNear(Values<float>(*out), {9, 0.25f, kNaN}, 0);
  auto half = RunOp("Pow", {MakeHalf({2}, {3, -1.5f}), Make<int64_t>({1}, {2})}, 15);
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(HalfValues(*half), (std::vector<float>{9, 2.25f}));
}

TEST(ElementwisePowTest, MixedTypes) {
  auto int_base = RunOp("Pow", {Make<int32_t>({3}, {1, 2, 3}), Make<float>({3}, {4, 5, 6})}, 15);
  ASSERT_TRUE(int_base.ok()) << int_base.status();
  EXPECT_EQ(Values<int32_t>(*int_base), (std::vector<int32_t>{1, 32, 729}));
  auto float_base = RunOp("Pow", {Make<float>({3}, {1, 2, 3}), Make<int64_t>({3}, {4, 5, -1})}, 15);
  ASSERT_TRUE(float_base.ok());
  ExpectNear(Values<float>(*float_base), {1, 32, 1.0f / 3}, 1e-7);
  auto ints = RunOp("Pow", {Make<int64_t>({5}, {2, -3, 1, -1, 5}), Make<int64_t>({5}, {10, 3, -5, -3, -1})}, 15);
  ASSERT_TRUE(ints.ok());
  EXPECT_EQ(Values<int64_t>(*ints), (std::vector<int64_t>{1024, -27, 1, -1, 0}));
}

TEST(ElementwisePowTest, BoolExponentIsInvalid) {
  auto out = RunOp("Pow", {Make<float>({1}, {2}), MakeBool({1}, {1})}, 15);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseCompareTest, FloatWithNaN) {
  const Tensor a = Make<float>({4}, {1, 2, kNaN, 3});
  const Tensor b = Make<float>({4}, {1, 3, kNaN, 2});
  auto eq = RunOp("Equal", {a, b}, 19);
  auto lt = RunOp("Less", {a, b}, 13);
  auto gt = RunOp("Greater", {a, b}, 13);
  auto le = RunOp("LessOrEqual", {a, b}, 16);
  auto ge = RunOp("GreaterOrEqual", {a, b}, 16);
  ASSERT_TRUE(eq.ok() && lt.ok() && gt.ok() && le.ok() && ge.ok());
  EXPECT_EQ(eq->type(), ElementType::kBool);
  EXPECT_EQ(Values<int>(*eq), (std::vector<int>{1, 0, 0, 0}));
  EXPECT_EQ(Values<int>(*lt), (std::vector<int>{0, 1, 0, 0}));
  EXPECT_EQ(Values<int>(*gt), (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(Values<int>(*le), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(Values<int>(*ge), (std::vector<int>{1, 0, 0, 1}));
}

TEST(ElementwiseCompareTest, IntegersBroadcastAndBool) {
  auto lt = RunOp("Less", {Make<int8_t>({2, 2}, {-1, 5, 3, 0}), Make<int8_t>({2, 1}, {0, 3})}, 13);
  ASSERT_TRUE(lt.ok());
  EXPECT_EQ(Values<int>(*lt), (std::vector<int>{1, 0, 0, 1}));
  auto eq = RunOp("Equal", {MakeBool({3}, {1, 0, 1}), MakeBool({}, {1})}, 13);
  ASSERT_TRUE(eq.ok()) << eq.status();
  EXPECT_EQ(Values<int>(*eq), (std::vector<int>{1, 0, 1}));
  auto u64 = RunOp("Greater", {Make<uint64_t>({1}, {~uint64_t{0}}), Make<uint64_t>({1}, {1})}, 13);
  ASSERT_TRUE(u64.ok());
  EXPECT_EQ(Values<int>(*u64), (std::vector<int>{1}));
}

TEST(ElementwiseCompareTest, LessOnBoolIsInvalid) {
  auto out = RunOp("Less", {MakeBool({1}, {1}), MakeBool({1}, {0})}, 13);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseLogicTest, AndOrXorNotWithBroadcast) {
  const Tensor a = MakeBool({2, 2}, {0, 0, 1, 1});
  const Tensor b = MakeBool({2}, {0, 1});
  auto a_and = RunOp("And", {a, b}, 7);
  auto a_or = RunOp("Or", {a, b}, 7);
  auto a_xor = RunOp("Xor", {a, b}, 7);
  auto a_not = RunOp("Not", {a}, 1);
  ASSERT_TRUE(a_and.ok() && a_or.ok() && a_xor.ok() && a_not.ok());
  EXPECT_EQ(Values<int>(*a_and), (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(Values<int>(*a_or), (std::vector<int>{0, 1, 1, 1}));
  EXPECT_EQ(Values<int>(*a_xor), (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(Values<int>(*a_not), (std::vector<int>{1, 1, 0, 0}));
}

TEST(ElementwiseLogicTest, NonCanonicalBoolBytesCountAsTrue) {
  Tensor a = MakeBool({2}, {0, 0});
  a.data<uint8_t>()[0] = 2;
  auto out = RunOp("And", {a, MakeBool({2}, {1, 1})}, 7);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Values<int>(*out), (std::vector<int>{1, 0}));
}

TEST(ElementwiseLogicTest, AndOnFloatIsInvalid) {
  auto out = RunOp("And", {Make<float>({1}, {1}), Make<float>({1}, {1})}, 7);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseBitwiseTest, IntegerOps) {
  const Tensor a = Make<int32_t>({3}, {0b1100, -1, 7});
  const Tensor b = Make<int32_t>({3}, {0b1010, 5, 0});
  auto band = RunOp("BitwiseAnd", {a, b}, 18);
  auto bor = RunOp("BitwiseOr", {a, b}, 18);
  auto bxor = RunOp("BitwiseXor", {a, b}, 18);
  auto bnot = RunOp("BitwiseNot", {a}, 18);
  ASSERT_TRUE(band.ok() && bor.ok() && bxor.ok() && bnot.ok());
  EXPECT_EQ(Values<int32_t>(*band), (std::vector<int32_t>{0b1000, 5, 0}));
  EXPECT_EQ(Values<int32_t>(*bor), (std::vector<int32_t>{0b1110, -1, 7}));
  EXPECT_EQ(Values<int32_t>(*bxor), (std::vector<int32_t>{0b0110, -6, 7}));
  EXPECT_EQ(Values<int32_t>(*bnot), (std::vector<int32_t>{-13, 0, -8}));
  auto u8 = RunOp("BitwiseNot", {Make<uint8_t>({1}, {0x0f})}, 18);
  ASSERT_TRUE(u8.ok());
  EXPECT_EQ(Values<uint8_t>(*u8)[0], 0xf0);
}

TEST(ElementwiseBitShiftTest, LeftRightAndOversizedShifts) {
  const Tensor x = Make<uint8_t>({4}, {1, 0x81, 255, 16});
  const Tensor s = Make<uint8_t>({4}, {3, 1, 8, 200});
  auto left = RunOp("BitShift", {x, s}, 11, Attrs({{"direction", std::string("LEFT")}}));
  auto right = RunOp("BitShift", {x, s}, 11, Attrs({{"direction", std::string("RIGHT")}}));
  ASSERT_TRUE(left.ok() && right.ok());
  EXPECT_EQ(Values<uint8_t>(*left), (std::vector<uint8_t>{8, 0x02, 0, 0}));
  EXPECT_EQ(Values<uint8_t>(*right), (std::vector<uint8_t>{0, 0x40, 0, 0}));
  auto u64 = RunOp("BitShift", {Make<uint64_t>({1}, {1}), Make<uint64_t>({1}, {63})}, 11,
                   Attrs({{"direction", std::string("LEFT")}}));
  ASSERT_TRUE(u64.ok());
  EXPECT_EQ(Values<uint64_t>(*u64)[0], uint64_t{1} << 63);
}

TEST(ElementwiseBitShiftTest, BadDirection) {
  auto out = RunOp("BitShift", {Make<uint8_t>({1}, {1}), Make<uint8_t>({1}, {1})}, 11,
                   Attrs({{"direction", std::string("UP")}}));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  auto missing = RunOp("BitShift", {Make<uint8_t>({1}, {1}), Make<uint8_t>({1}, {1})}, 11);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseVariadicTest, MinMaxThreeInputsBroadcast) {
  const Tensor a = Make<float>({2, 2}, {1, 5, 3, 8});
  const Tensor b = Make<float>({2}, {4, 2});
  const Tensor c = Tensor::Scalar(3.0f);
  auto mn = RunOp("Min", {a, b, c}, 13);
  auto mx = RunOp("Max", {a, b, c}, 13);
  ASSERT_TRUE(mn.ok() && mx.ok());
  EXPECT_EQ(Values<float>(*mn), (std::vector<float>{1, 2, 3, 2}));
  EXPECT_EQ(Values<float>(*mx), (std::vector<float>{4, 5, 4, 8}));
}

TEST(ElementwiseVariadicTest, MinMaxPropagateNaNFromEitherSide) {
  const Tensor a = Make<float>({3}, {kNaN, 1, 2});
  const Tensor b = Make<float>({3}, {1, kNaN, 0});
  auto mn = RunOp("Min", {a, b}, 13);
  auto mx = RunOp("Max", {b, a}, 13);
  ASSERT_TRUE(mn.ok() && mx.ok());
  ExpectNear(Values<float>(*mn), {kNaN, kNaN, 0}, 0);
  ExpectNear(Values<float>(*mx), {kNaN, kNaN, 2}, 0);
}

TEST(ElementwiseVariadicTest, SingleInputAndIntegers) {
  auto one = RunOp("Max", {Make<int64_t>({2}, {3, -1})}, 13);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(Values<int64_t>(*one), (std::vector<int64_t>{3, -1}));
  auto u8 = RunOp("Min", {Make<uint8_t>({3}, {0, 200, 7}), Make<uint8_t>({3}, {1, 100, 7})}, 13);
  ASSERT_TRUE(u8.ok());
  EXPECT_EQ(Values<uint8_t>(*u8), (std::vector<uint8_t>{0, 100, 7}));
}

TEST(ElementwiseVariadicTest, SumAndMean) {
  const Tensor a = Make<float>({3}, {1, 2, 3});
  const Tensor b = Make<float>({1}, {10});
  const Tensor c = Make<float>({2, 1}, {100, 200});
  auto sum = RunOp("Sum", {a, b, c}, 13);
  auto mean = RunOp("Mean", {a, b, c}, 13);
  ASSERT_TRUE(sum.ok() && mean.ok());
  EXPECT_EQ(sum->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<float>(*sum), (std::vector<float>{111, 112, 113, 211, 212, 213}));
  ExpectNear(Values<float>(*mean), {37, 112.0f / 3, 113.0f / 3, 211.0f / 3, 212.0f / 3, 71}, 1e-5);
  auto mean_one = RunOp("Mean", {a}, 13);
  ASSERT_TRUE(mean_one.ok());
  EXPECT_EQ(Values<float>(*mean_one), (std::vector<float>{1, 2, 3}));
}

TEST(ElementwiseVariadicTest, Errors) {
  auto types = RunOp("Max", {Make<float>({1}, {1}), Make<double>({1}, {1})}, 13);
  ASSERT_FALSE(types.ok());
  EXPECT_EQ(types.status().code(), absl::StatusCode::kInvalidArgument);
  auto shapes = RunOp("Sum", {Make<float>({2}, {1, 2}), Make<float>({3}, {1, 2, 3})}, 13);
  ASSERT_FALSE(shapes.ok());
  EXPECT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument);
  auto sum_int = RunOp("Sum", {Make<int32_t>({1}, {1})}, 13);
  ASSERT_FALSE(sum_int.ok());
  EXPECT_EQ(sum_int.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace attune::testing
