// MatMulInteger, QLinearMatMul, MatMulIntegerToFloat, DynamicQuantizeMatMul
// and DynamicQuantizeLinear against integer / double references; the
// oneDNN and portable integer paths against each other, bit for bit.
#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "ops/quantize/dynamic_quantize.h"
#include "ops/quantize/integer_product.h"
#include "tests/quantize_ops/quantize_test_util.h"

namespace attune::testing {
namespace {

template <typename T>
std::vector<T> RandomInts(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(d(rng));
  return v;
}

std::vector<int32_t> AsInt32(const std::vector<int64_t>& v) { return std::vector<int32_t>(v.begin(), v.end()); }

template <typename A, typename B>
void CheckMatMulInteger(int64_t m, int64_t k, int64_t n, bool per_channel, bool force_portable, int threads) {
  SCOPED_TRACE(::testing::Message() << m << "x" << k << "x" << n << " per_channel " << per_channel << " portable "
                                    << force_portable << " threads " << threads);
  const auto a = RandomInts<A>(m * k, 1), b = RandomInts<B>(k * n, 2);
  const std::vector<A> za = {static_cast<A>(std::is_signed_v<A> ? -3 : 131)};
  std::vector<B> zb;
  for (int64_t j = 0; j < (per_channel ? n : 1); ++j) zb.push_back(static_cast<B>(std::is_signed_v<B> ? j % 7 - 3 : 120 + j % 9));
  attune::quantize::IntegerProduct::ForcePortable(force_portable);
  auto out = Call("MatMulInteger",
                  {Make<A>({m, k}, a), Make<B>({k, n}, b), Make<A>({}, za), Make<B>({static_cast<int64_t>(zb.size())}, zb)},
                  10, {}, {1, 3}, 1, threads);
  attune::quantize::IntegerProduct::ForcePortable(false);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<int64_t> zav = {za[0]}, zbv(zb.begin(), zb.end());
  EXPECT_EQ(Values<int32_t>((*out)[0]), AsInt32(RefIntegerProduct(a, b, m, k, n, zav, zbv)));
}

TEST(MatMulIntegerTest, EveryTypePairAndPathIsExact) {
  for (bool portable : {false, true})
    for (bool per_channel : {false, true})
      for (int threads : {1, 2}) {
        CheckMatMulInteger<uint8_t, int8_t>(37, 70, 19, per_channel, portable, threads);
        CheckMatMulInteger<uint8_t, uint8_t>(5, 64, 33, per_channel, portable, threads);
        CheckMatMulInteger<int8_t, int8_t>(1, 33, 7, per_channel, portable, threads);
        CheckMatMulInteger<int8_t, uint8_t>(130, 16, 8, per_channel, portable, threads);
      }
}

TEST(MatMulIntegerTest, RunTimeBatchedAndPerRowZeroPoints) {
  // A [2, 3, 4] with per-row zero points [2, 3, 1], B [2, 4, 5] at run time.
  const auto a = RandomInts<uint8_t>(24, 3);
  const auto b = RandomInts<int8_t>(40, 4);
  const std::vector<uint8_t> za = {1, 2, 3, 4, 5, 6};
  auto out = Call("MatMulInteger", {Make<uint8_t>({2, 3, 4}, a), Make<int8_t>({2, 4, 5}, b), Make<uint8_t>({2, 3, 1}, za)},
                  10);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<int32_t> want;
  for (int batch = 0; batch < 2; ++batch) {
    std::vector<uint8_t> ab(a.begin() + batch * 12, a.begin() + batch * 12 + 12);
    std::vector<int8_t> bb(b.begin() + batch * 20, b.begin() + batch * 20 + 20);
    std::vector<int64_t> zr(za.begin() + batch * 3, za.begin() + batch * 3 + 3);
    for (int64_t v : RefIntegerProduct(ab, bb, 3, 4, 5, zr, {})) want.push_back(static_cast<int32_t>(v));
  }
  EXPECT_EQ(Values<int32_t>((*out)[0]), want);
}

TEST(MatMulIntegerTest, BadZeroPointsAreRefused) {
  auto wrong_len = Call("MatMulInteger", {Make<uint8_t>({2, 2}, {1, 2, 3, 4}), Make<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                          Tensor(), Make<int8_t>({2}, {0, 0})},
                        10, {}, {1, 3});
  ASSERT_FALSE(wrong_len.ok());
  EXPECT_EQ(wrong_len.status().code(), absl::StatusCode::kInvalidArgument);
  auto wrong_type = Call("MatMulInteger", {Make<uint8_t>({2, 2}, {1, 2, 3, 4}), Make<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                           Make<int8_t>({}, {0})},
                         10);
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(std::string(wrong_type.status().message()).find("zero point has type int8"), std::string::npos);
}

TEST(DynamicQuantizeLinearTest, MatchesTheSpecFormula) {
  const std::vector<float> x = {0, 2, -3, -2.5f, 1.34f, 0.5f, std::numeric_limits<float>::quiet_NaN()};
  auto out = Call("DynamicQuantizeLinear", {Make<float>({7}, x)}, 11, {}, {}, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  const float scale = (2.0f - -3.0f) / 255.0f;
  EXPECT_EQ(Values<float>((*out)[1])[0], scale);
  const uint8_t zp = static_cast<uint8_t>(std::nearbyint(3.0f / scale));
  EXPECT_EQ(Values<uint8_t>((*out)[2])[0], zp);
  std::vector<uint8_t> want;
  for (float v : x) want.push_back(static_cast<uint8_t>(RefQuantize(v / scale, zp, 0, 255)));
  EXPECT_EQ(Values<uint8_t>((*out)[0]), want);
  // All zeros: scale 1, zero point 0.
  auto zeros = Call("DynamicQuantizeLinear", {Make<float>({3}, {0, 0, 0})}, 11, {}, {}, 3);
  ASSERT_TRUE(zeros.ok());
  EXPECT_EQ(Values<float>((*zeros)[1])[0], 1.0f);
  EXPECT_EQ(Values<uint8_t>((*zeros)[2])[0], 0);
}

TEST(MatMulIntegerToFloatTest, EqualsCastThenMulThenAdd) {
  const int64_t m = 9, k = 40, n = 6;
  const auto a = RandomInts<uint8_t>(m * k, 5);
  const auto b = RandomInts<int8_t>(k * n, 6);
  const std::vector<float> b_scale = {0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f};
  const std::vector<float> bias = {1, -1, 0.5f, -0.5f, 2, 3};
  const float a_scale = 0.013f;
  auto out = Call("MatMulIntegerToFloat",
                  {Make<uint8_t>({m, k}, a), Make<int8_t>({k, n}, b), Tensor::Scalar(a_scale), Make<float>({n}, b_scale),
                   Tensor::Scalar<uint8_t>(128), Tensor(), Make<float>({n}, bias)},
                  1, {}, {1, 3, 6}, 1, 1, "com.microsoft");
  ASSERT_TRUE(out.ok()) << out.status();
  const auto acc = RefIntegerProduct(a, b, m, k, n, {128}, {});
  std::vector<float> want;
  for (int64_t i = 0; i < m * n; ++i) {
    const float mul = a_scale * b_scale[i % n];
    const float prod = static_cast<float>(acc[i]) * mul;
    want.push_back(prod + bias[i % n]);
  }
  EXPECT_EQ(Values<float>((*out)[0]), want);
}

TEST(DynamicQuantizeMatMulTest, EqualsDynamicQuantizeLinearThenProduct) {
  const int64_t m = 4, k = 24, n = 5;
  std::vector<float> a(m * k);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::cos(static_cast<float>(i)) * 3.0f + 0.5f;
  const auto b = RandomInts<uint8_t>(k * n, 7);
  auto out = Call("DynamicQuantizeMatMul",
                  {Make<float>({m, k}, a), Make<uint8_t>({k, n}, b), Tensor::Scalar(0.02f), Tensor::Scalar<uint8_t>(127)},
                  1, {}, {1, 2, 3}, 1, 2, "com.microsoft");
  ASSERT_TRUE(out.ok()) << out.status();
  auto dq = Call("DynamicQuantizeLinear", {Make<float>({m, k}, a)}, 11, {}, {}, 3);
  ASSERT_TRUE(dq.ok());
  const auto qa = Values<uint8_t>((*dq)[0]);
  const float a_scale = Values<float>((*dq)[1])[0];
  const int64_t za = Values<uint8_t>((*dq)[2])[0];
  const auto acc = RefIntegerProduct(qa, b, m, k, n, {za}, {127});
  std::vector<float> want;
  for (int64_t v : acc) want.push_back(static_cast<float>(v) * (a_scale * 0.02f));
  EXPECT_EQ(Values<float>((*out)[0]), want);
}

TEST(QLinearMatMulTest, RequantizesWithSaturation) {
  const int64_t m = 3, k = 8, n = 4;
  const auto a = RandomInts<uint8_t>(m * k, 8);
  const auto b = RandomInts<uint8_t>(k * n, 9);
  const float as = 0.05f, bs = 0.02f, ys = 0.3f;
  auto out = Call("QLinearMatMul",
                  {Make<uint8_t>({m, k}, a), Tensor::Scalar(as), Tensor::Scalar<uint8_t>(100), Make<uint8_t>({k, n}, b),
                   Tensor::Scalar(bs), Tensor::Scalar<uint8_t>(130), Tensor::Scalar(ys), Tensor::Scalar<uint8_t>(90)},
                  10);
  ASSERT_TRUE(out.ok()) << out.status();
  const auto acc = RefIntegerProduct(a, b, m, k, n, {100}, {130});
  std::vector<uint8_t> want;
  const double mult = as * bs / ys;
  for (int64_t v : acc) want.push_back(static_cast<uint8_t>(RefQuantize(static_cast<double>(v) * mult, 90, 0, 255)));
  EXPECT_EQ(Values<uint8_t>((*out)[0]), want);
}

}  // namespace
}  // namespace attune::testing
