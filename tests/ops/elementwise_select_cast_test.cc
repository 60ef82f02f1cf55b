// Clip, Where, Cast and CastLike.
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/ops/elementwise_test_util.h"

namespace attune::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ElementwiseClipTest, AttributeForm) {
  const Tensor x = Make<float>({4}, {-5, 0.5f, 5, kNaN});
  auto out = RunOp("Clip", {x}, 6, Attrs({{"min", -1.0f}, {"max", 1.0f}}));
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>(*out), {-1, 0.5f, 1, kNaN}, 0);
  auto defaults = RunOp("Clip", {Make<float>({2}, {-kInf, 3})}, 6);
  ASSERT_TRUE(defaults.ok());
  ExpectNear(Values<float>(*defaults), {std::numeric_limits<float>::lowest(), 3}, 0);
}

TEST(ElementwiseClipTest, InputForm) {
  const Tensor x = Make<float>({3}, {-5, 0.5f, 5});
  auto both = RunOp("Clip", {x, Tensor::Scalar(-1.0f), Tensor::Scalar(1.0f)}, 13);
  auto min_only = RunOp("Clip", {x, Tensor::Scalar(0.0f)}, 13);
  auto max_only = RunOp("Clip", {x, Tensor(), Tensor::Scalar(0.0f)}, 13);
  auto none = RunOp("Clip", {x}, 11);
  ASSERT_TRUE(both.ok() && min_only.ok() && max_only.ok() && none.ok());
  EXPECT_EQ(Values<float>(*both), (std::vector<float>{-1, 0.5f, 1}));
  EXPECT_EQ(Values<float>(*min_only), (std::vector<float>{0, 0.5f, 5}));
  EXPECT_EQ(Values<float>(*max_only), (std::vector<float>{-5, 0, 0}));
  EXPECT_EQ(Values<float>(*none), (std::vector<float>{-5, 0.5f, 5}));
}

TEST(ElementwiseClipTest, MinAboveMaxGivesMax) {
  auto out = RunOp("Clip", {Make<float>({3}, {-5, 0, 5}), Tensor::Scalar(2.0f), Tensor::Scalar(1.0f)}, 13);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Values<float>(*out), (std::vector<float>{1, 1, 1}));
}

TEST(ElementwiseClipTest, IntegersAndHalf) {
  auto i8 = RunOp("Clip", {Make<int8_t>({4}, {-128, -3, 3, 127}), Make<int8_t>({1}, {-2})}, 13);
  ASSERT_TRUE(i8.ok()) << i8.status();
  EXPECT_EQ(Values<int8_t>(*i8), (std::vector<int8_t>{-2, -2, 3, 127}));
  auto u64 = RunOp("Clip", {Make<uint64_t>({2}, {1, ~uint64_t{0}}), Tensor(), Tensor::Scalar<uint64_t>(10)}, 13);
  ASSERT_TRUE(u64.ok());
  EXPECT_EQ(Values<uint64_t>(*u64), (std::vector<uint64_t>{1, 10}));
  auto half = RunOp("Clip", {MakeHalf({3}, {-2, 0.1f, 2}), MakeHalf({}, {-1}), MakeHalf({}, {1})}, 13);
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(HalfValues(*half), (std::vector<float>{-1, HalfToFloat(FloatToHalf(0.1f)), 1}));
}

TEST(ElementwiseClipTest, BadBounds) {
  const Tensor x = Make<float>({2}, {1, 2});
  auto wrong_type = RunOp("Clip", {x, Tensor::Scalar(0.0)}, 13);
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_EQ(wrong_type.status().code(), absl::StatusCode::kInvalidArgument);
  auto not_scalar = RunOp("Clip", {x, Make<float>({2}, {0, 1})}, 13);
  ASSERT_FALSE(not_scalar.ok());
  EXPECT_EQ(not_scalar.status().code(), absl::StatusCode::kInvalidArgument);
  auto bool_input = RunOp("Clip", {MakeBool({1}, {1})}, 13);
  ASSERT_FALSE(bool_input.ok());
  EXPECT_EQ(bool_input.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseWhereTest, ThreeWayBroadcast) {
  const Tensor cond = MakeBool({2, 1}, {1, 0});
  const Tensor x = Make<float>({1, 3}, {1, 2, 3});
  const Tensor y = Tensor::Scalar(-kInf);
  auto out = RunOp("Where", {cond, x, y}, 16);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<float>(*out), (std::vector<float>{1, 2, 3, -kInf, -kInf, -kInf}));
}

TEST(ElementwiseWhereTest, AllValueSizes) {
  const Tensor cond = MakeBool({3}, {1, 0, 1});
  auto i64 = RunOp("Where", {cond, Make<int64_t>({3}, {1, 2, 3}), Make<int64_t>({3}, {-1, -2, -3})}, 16);
  auto u8 = RunOp("Where", {cond, Make<uint8_t>({1}, {7}), Make<uint8_t>({3}, {4, 5, 6})}, 16);
  auto b = RunOp("Where", {cond, MakeBool({}, {0}), MakeBool({}, {1})}, 16);
  auto half = RunOp("Where", {cond, MakeHalf({3}, {1, 2, 3}), MakeHalf({}, {0.5f})}, 16);
  ASSERT_TRUE(i64.ok() && u8.ok() && b.ok() && half.ok());
  EXPECT_EQ(Values<int64_t>(*i64), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(Values<uint8_t>(*u8), (std::vector<uint8_t>{7, 5, 7}));
  EXPECT_EQ(b->type(), ElementType::kBool);
  EXPECT_EQ(Values<int>(*b), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(HalfValues(*half), (std::vector<float>{1, 0.5f, 3}));
}

TEST(ElementwiseWhereTest, LargeMaskMultiThreaded) {
  // An attention-style mask [1, 1, T, T] over scores [1, H, T, T].
  const int64_t heads = 4, t = 200;
  std::vector<bool> mask(t * t);
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < t; ++j) mask[i * t + j] = j <= i;
  std::vector<float> scores(heads * t * t, 1.0f);
  auto out = RunOp("Where", {Make<bool>({1, 1, t, t}, mask), Make<float>({1, heads, t, t}, scores),
                             Tensor::Scalar(-1.0f)},
                   16, {}, 2);
  ASSERT_TRUE(out.ok());
  const auto v = Values<float>(*out);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < t; ++j) ASSERT_EQ(v[(h * t + i) * t + j], j <= i ? 1.0f : -1.0f);
}

TEST(ElementwiseWhereTest, Errors) {
  const Tensor x = Make<float>({2}, {1, 2});
  auto cond_type = RunOp("Where", {Make<float>({2}, {1, 0}), x, x}, 16);
  ASSERT_FALSE(cond_type.ok());
  EXPECT_EQ(cond_type.status().code(), absl::StatusCode::kInvalidArgument);
  auto value_types = RunOp("Where", {MakeBool({2}, {1, 0}), x, Make<double>({2}, {1, 2})}, 16);
  ASSERT_FALSE(value_types.ok());
  EXPECT_EQ(value_types.status().code(), absl::StatusCode::kInvalidArgument);
  auto shapes = RunOp("Where", {MakeBool({3}, {1, 0, 1}), x, x}, 16);
  ASSERT_FALSE(shapes.ok());
  EXPECT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument);
}

absl::StatusOr<Tensor> CastTo(const Tensor& x, ElementType to, int opset = 21) {
  return RunOp("Cast", {x}, opset, Attrs({{"to", static_cast<int64_t>(to)}}));
}

TEST(ElementwiseCastTest, FloatToIntTruncatesAndSaturates) {
  const Tensor x = Make<float>({6}, {2.7f, -2.7f, kNaN, 1e10f, -1e10f, -0.5f});
  auto i32 = CastTo(x, ElementType::kInt32);
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_EQ(Values<int32_t>(*i32), (std::vector<int32_t>{2, -2, 0, std::numeric_limits<int32_t>::max(),
                                                           std::numeric_limits<int32_t>::min(), 0}));
  auto u8 = CastTo(Make<float>({4}, {255.9f, 256, -1, 3.99f}), ElementType::kUint8);
  ASSERT_TRUE(u8.ok());
  EXPECT_EQ(Values<uint8_t>(*u8), (std::vector<uint8_t>{255, 255, 0, 3}));
  auto i64 = CastTo(Make<double>({2}, {9.3e18, -9.3e18}), ElementType::kInt64);
  ASSERT_TRUE(i64.ok());
  EXPECT_EQ(Values<int64_t>(*i64), (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                                           std::numeric_limits<int64_t>::min()}));
}

TEST(ElementwiseCastTest, IntegerNarrowingWraps) {
  auto i8 = CastTo(Make<int32_t>({3}, {200, -129, 5}), ElementType::kInt8);
  ASSERT_TRUE(i8.ok());
  EXPECT_EQ(Values<int8_t>(*i8), (std::vector<int8_t>{-56, 127, 5}));
  auto u32 = CastTo(Make<int64_t>({1}, {-1}), ElementType::kUint32);
  ASSERT_TRUE(u32.ok());
  EXPECT_EQ(Values<uint32_t>(*u32), (std::vector<uint32_t>{0xffffffffu}));
}

TEST(ElementwiseCastTest, BoolConversions) {
  auto to_bool = CastTo(Make<float>({4}, {0.0f, -0.0f, kNaN, 0.1f}), ElementType::kBool);
  ASSERT_TRUE(to_bool.ok());
  EXPECT_EQ(Values<int>(*to_bool), (std::vector<int>{0, 0, 1, 1}));
  auto int_to_bool = CastTo(Make<int64_t>({3}, {0, 36, -1}), ElementType::kBool);
  ASSERT_TRUE(int_to_bool.ok());
  EXPECT_EQ(Values<int>(*int_to_bool), (std::vector<int>{0, 1, 1}));
  auto from_bool = CastTo(MakeBool({2}, {1, 0}), ElementType::kFloat32);
  ASSERT_TRUE(from_bool.ok());
  EXPECT_EQ(Values<float>(*from_bool), (std::vector<float>{1, 0}));
  auto half_to_bool = CastTo(MakeHalf({2}, {0, 2}), ElementType::kBool);
  ASSERT_TRUE(half_to_bool.ok());
  EXPECT_EQ(Values<int>(*half_to_bool), (std::vector<int>{0, 1}));
}

TEST(ElementwiseCastTest, Float16RoundTrip) {
  auto half = CastTo(Make<float>({5}, {0.1f, 65504, 65520, 1e-8f, kNaN}), ElementType::kFloat16);
  ASSERT_TRUE(half.ok());
  // 0.1 -> 0x2E66; 65520 is halfway to 65536 (not a half): rounds to inf.
  EXPECT_EQ(half->data<Float16>()[0].bits, 0x2E66);
  auto back = CastTo(*half, ElementType::kFloat32);
  ASSERT_TRUE(back.ok());
  ExpectNear(Values<float>(*back), {0.0999755859375f, 65504, kInf, 0, kNaN}, 0);
  auto dbl = CastTo(*half, ElementType::kFloat64);
  ASSERT_TRUE(dbl.ok());
  EXPECT_EQ(Values<double>(*dbl)[0], 0.0999755859375);
}

TEST(ElementwiseCastTest, DoubleToHalfRoundsOnce) {
  // 1 + 2^-11 + 2^-40 is just above the midpoint between halves 1 and 1 + 2^-10.
  // Rounding to float first would land exactly on the midpoint and tie to 1.
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  auto half = CastTo(Make<double>({1}, {x}), ElementType::kFloat16);
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(HalfValues(*half)[0], 1.0f + std::ldexp(1.0f, -10));
  auto bf = CastTo(Make<double>({1}, {1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)}), ElementType::kBFloat16);
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ(BFloat16ToFloat(bf->data<BFloat16>()[0]), 1.0f + std::ldexp(1.0f, -7));
}

TEST(ElementwiseCastTest, FloatToBFloat16RoundsToNearestEven) {
  auto bf = CastTo(Make<float>({3}, {1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -8), 3.0f}),
                   ElementType::kBFloat16);
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ(BFloat16ToFloat(bf->data<BFloat16>()[0]), 1.0f);
  EXPECT_EQ(BFloat16ToFloat(bf->data<BFloat16>()[1]), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(BFloat16ToFloat(bf->data<BFloat16>()[2]), 3.0f);
}

TEST(ElementwiseCastTest, WideIntegersToFloat) {
  auto f = CastTo(Make<uint64_t>({1}, {~uint64_t{0}}), ElementType::kFloat32);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(Values<float>(*f)[0], 18446744073709551616.0f);
  auto h = CastTo(Make<int32_t>({2}, {3, 100000}), ElementType::kFloat16);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(HalfValues(*h), (std::vector<float>{3, kInf}));
}

TEST(ElementwiseCastTest, SameTypeKeepsValues) {
  auto out = CastTo(Make<int64_t>({2}, {5, -6}), ElementType::kInt64, 13);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Values<int64_t>(*out), (std::vector<int64_t>{5, -6}));
}

TEST(ElementwiseCastTest, BadTargets) {
  const Tensor x = Make<float>({1}, {1});
  auto complex = CastTo(x, static_cast<ElementType>(14));  // complex64
  ASSERT_FALSE(complex.ok());
  EXPECT_EQ(complex.status().code(), absl::StatusCode::kUnimplemented);
  auto bogus = CastTo(x, static_cast<ElementType>(999));
  ASSERT_FALSE(bogus.ok());
  EXPECT_EQ(bogus.status().code(), absl::StatusCode::kInvalidArgument);
  auto missing = RunOp("Cast", {x}, 13);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseCastTest, CastLike) {
  auto out = RunOp("CastLike", {Make<int64_t>({2}, {1, -2}), Make<float>({0}, {})}, 15);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>(*out), (std::vector<float>{1, -2}));
  auto ignored_attrs =
      RunOp("CastLike", {Make<float>({1}, {2.5f}), Make<int32_t>({1}, {0})}, 19, Attrs({{"saturate", int64_t{0}}}));
  ASSERT_TRUE(ignored_attrs.ok());
  EXPECT_EQ(Values<int32_t>(*ignored_attrs), (std::vector<int32_t>{2}));
}

TEST(ElementwiseRegistryTest, OpsetRanges) {
  const KernelRegistry& r = DefaultKernelRegistry();
  for (int opset : {7, 13, 14, 21, 25}) EXPECT_TRUE(r.Supports("", "Add", opset)) << opset;
  EXPECT_FALSE(r.Supports("", "Add", 6));  // legacy broadcast attribute
  EXPECT_TRUE(r.Supports("", "Clip", 6));
  EXPECT_TRUE(r.Supports("", "Clip", 13));
  EXPECT_NE(*r.Find("", "Clip", 10), *r.Find("", "Clip", 11));
  // Gelu (20) and Swish (24) at every opset: the element-wise fusion writes
  // them into models of older opsets.
  for (int opset : {1, 13, 17, 20, 24})
    for (const char* op : {"Gelu", "Swish"}) EXPECT_TRUE(r.Supports("", op, opset)) << op << " " << opset;
  EXPECT_TRUE(r.Supports("ai.onnx", "Cast", 25));
  EXPECT_FALSE(r.Supports("", "Cast", 5));
  for (const char* op : {"Sub", "Mul", "Div", "Pow", "Min", "Max", "Equal", "Less", "Greater", "And", "Or", "Xor",
                         "Sqrt", "Exp", "Log", "Erf", "Tanh", "Sigmoid", "Relu", "Neg", "Abs", "Reciprocal",
                         "Sign", "Floor", "Ceil", "Round", "IsNaN", "IsInf", "Sin", "Cos", "Where", "CastLike",
                         "LessOrEqual", "GreaterOrEqual", "Mod", "BitShift", "LeakyRelu", "Softplus", "HardSigmoid"})
    EXPECT_TRUE(r.Supports("", op, 21)) << op;
}

}  // namespace
}  // namespace attune::testing
