// The narrow element types against a brute-force reference: every finite
// code of each float format is decoded from its fields, and a float must
// become the nearest one (ties to the even code; the overflow rules of
// ONNX's Cast past the largest). Integers wrap; packing is checked by bytes.
#include "core/ir/narrow_types.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "importer/tensor_proto.h"
#include "tests/ops/op_test_util.h"

namespace attune {
namespace {

struct Format {
  ElementType type;
  int exponent_bits, mantissa_bits, bias;
  int top_code;  // largest finite magnitude code
  uint8_t sign_bit;
  bool unsigned_zero;
};

const Format kFormats[] = {
    {kFloat8E4M3FN, 4, 3, 7, 0x7e, 0x80, false}, {kFloat8E4M3FNUZ, 4, 3, 8, 0x7f, 0x80, true},
    {kFloat8E5M2, 5, 2, 15, 0x7b, 0x80, false},  {kFloat8E5M2FNUZ, 5, 2, 16, 0x7f, 0x80, true},
    {kFloat4E2M1, 2, 1, 1, 0x7, 0x8, false},
};

// Value of a non-negative code from its fields: (1 + f / 2^m) * 2^(e - bias), or subnormal.
double FieldValue(const Format& f, int code) {
  const int e = code >> f.mantissa_bits;
  const double fraction = (code & ((1 << f.mantissa_bits) - 1)) / std::pow(2.0, f.mantissa_bits);
  return e == 0 ? fraction * std::pow(2.0, 1 - f.bias) : (1 + fraction) * std::pow(2.0, e - f.bias);
}

// The expected code of x: nearest of codes 0..top_code+1 (top_code + 1 stands for
// "overflow"), ties to the even code.
uint8_t ReferenceEncode(const Format& f, float x, bool saturate) {
  const bool negative = std::signbit(x);
  const uint8_t sign = negative ? f.sign_bit : 0;
  const double a = std::fabs(static_cast<double>(x));
  int best = 0;
  double best_distance = INFINITY;
  for (int code = 0; code <= f.top_code + 1; ++code) {
    const double value = code == f.top_code + 1 ? 2 * FieldValue(f, f.top_code) - FieldValue(f, f.top_code - 1)
                                                : FieldValue(f, code);
    const double d = std::fabs(value - a);
    if (d < best_distance || (d == best_distance && code % 2 == 0)) {
      best = code;
      best_distance = d;
    }
  }
  // Far beyond the top the distances round to equal doubles: overflow outright.
  if (std::isinf(a) || a > 4 * FieldValue(f, f.top_code)) best = f.top_code + 1;
  if (best == f.top_code + 1) {
    if (saturate || f.type == kFloat4E2M1) return sign | f.top_code;
    if (f.type == kFloat8E5M2) return sign | 0x7c;
    return f.unsigned_zero ? 0x80 : (sign | 0x7f);
  }
  if (best == 0 && f.unsigned_zero) return 0;
  return sign | best;
}

std::vector<float> Probes(const Format& f) {
  std::vector<float> probes = {0.0f, -0.0f, INFINITY, -INFINITY, 1e-30f, 1e30f, 1e-45f};
  for (int code = 0; code <= f.top_code; ++code) {
    const double v = FieldValue(f, code);
    const double next = code == f.top_code ? 2 * v - FieldValue(f, code - 1) : FieldValue(f, code + 1);
    for (double p : {v, (v + next) / 2, std::nextafter((v + next) / 2, 0.0), std::nextafter((v + next) / 2, 1e9),
                     v * 0.999, v * 1.001, next * 4}) {
      probes.push_back(static_cast<float>(p));
      probes.push_back(-static_cast<float>(p));
    }
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> log_mag(-20, 18);
  for (int i = 0; i < 4000; ++i) probes.push_back((i % 2 ? -1 : 1) * std::exp2(log_mag(rng)));
  return probes;
}

TEST(NarrowTypes, FloatFormatsRoundToNearestEvenWithOnnxOverflowRules) {
  for (const Format& f : kFormats) {
    for (bool saturate : {true, false}) {
      for (float x : Probes(f)) {
        const uint8_t want = ReferenceEncode(f, x, saturate);
        ASSERT_EQ(FloatToNarrow(f.type, x, saturate), want)
            << ElementTypeName(f.type) << " x=" << x << " saturate=" << saturate;
      }
    }
  }
}

TEST(NarrowTypes, FloatFormatsDecodeEveryCode) {
  for (const Format& f : kFormats) {
    const int codes = 1 << (1 + f.exponent_bits + f.mantissa_bits);
    for (int code = 0; code < codes; ++code) {
      const float got = NarrowToFloat(f.type, static_cast<uint8_t>(code));
      const int magnitude = code & (f.sign_bit - 1);
      const bool negative = (code & f.sign_bit) != 0;
      if (magnitude > f.top_code || (f.unsigned_zero && code == 0x80)) {
        // The special codes: NaN, and inf in float8e5m2.
        if (f.type == kFloat8E5M2 && magnitude == 0x7c)
          EXPECT_EQ(got, negative ? -INFINITY : INFINITY);
        else
          EXPECT_TRUE(std::isnan(got)) << ElementTypeName(f.type) << " code " << code;
        continue;
      }
      EXPECT_EQ(got, (negative ? -1 : 1) * FieldValue(f, magnitude)) << ElementTypeName(f.type) << " code " << code;
      // Every finite value comes back to its code (-0 aside in the FNUZ formats).
      if (!(f.unsigned_zero && magnitude == 0)) EXPECT_EQ(FloatToNarrow(f.type, got), code);
    }
  }
}

TEST(NarrowTypes, KnownValuesAndNaN) {
  EXPECT_EQ(NarrowToFloat(kFloat8E4M3FN, 0x7e), 448.0f);
  EXPECT_EQ(NarrowToFloat(kFloat8E4M3FN, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(NarrowToFloat(kFloat8E4M3FNUZ, 0x7f), 240.0f);
  EXPECT_EQ(NarrowToFloat(kFloat8E5M2, 0x7b), 57344.0f);
  EXPECT_EQ(NarrowToFloat(kFloat8E5M2FNUZ, 0x01), std::ldexp(1.0f, -17));
  EXPECT_EQ(NarrowToFloat(kFloat4E2M1, 0x0f), -6.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(FloatToNarrow(kFloat8E4M3FN, nan), 0x7f);
  EXPECT_EQ(FloatToNarrow(kFloat8E4M3FN, -nan), 0xff);
  EXPECT_EQ(FloatToNarrow(kFloat8E5M2, nan), 0x7e);
  EXPECT_EQ(FloatToNarrow(kFloat8E4M3FNUZ, -nan), 0x80);
  EXPECT_EQ(FloatToNarrow(kFloat8E5M2FNUZ, nan), 0x80);
  EXPECT_EQ(FloatToNarrow(kFloat4E2M1, nan), 0x08);
  EXPECT_EQ(FloatToNarrow(kFloat8E4M3FNUZ, -0.0f), 0x00);  // no -0
  EXPECT_EQ(FloatToNarrow(kFloat8E4M3FN, 464.0f), 0x7e);  // tie below the overflow point: even
  EXPECT_EQ(FloatToNarrow(kFloat8E5M2, 61440.0f, false), 0x7c);  // tie at the top: to inf
}

TEST(NarrowTypes, E8M0RoundsOnTheExponent) {
  EXPECT_EQ(FloatToNarrow(kFloat8E8M0, 1.0f), 127);
  EXPECT_EQ(FloatToNarrow(kFloat8E8M0, 1.5f, true, E8M0Rounding::kUp), 128);
  EXPECT_EQ(FloatToNarrow(kFloat8E8M0, 1.5f, true, E8M0Rounding::kDown), 127);
  EXPECT_EQ(FloatToNarrow(kFloat8E8M0, 1.5f, true, E8M0Rounding::kNearest), 128);
  EXPECT_EQ(FloatToNarrow(kFloat8E8M0, 1.25f, true, E8M0Rounding::kNearest), 127);
  EXPECT_EQ(FloatToNarrow(kFloat8E8M0, INFINITY), 0xff);
  EXPECT_EQ(FloatToNarrow(kFloat8E8M0, 3e38f, true, E8M0Rounding::kUp), 0xfe);  // saturates
  EXPECT_EQ(FloatToNarrow(kFloat8E8M0, 3e38f, false, E8M0Rounding::kUp), 0xff);
  EXPECT_EQ(NarrowToFloat(kFloat8E8M0, 0), std::ldexp(1.0f, -127));
  EXPECT_EQ(NarrowToFloat(kFloat8E8M0, 254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(NarrowToFloat(kFloat8E8M0, 255)));
}

TEST(NarrowTypes, IntegersTruncateAndWrap) {
  for (int v = -40; v <= 40; ++v) {
    const float x = v + (v < 0 ? -0.75f : 0.75f);  // truncation toward zero first
    EXPECT_EQ(static_cast<int8_t>(FloatToNarrow(kInt4, x)), static_cast<int8_t>(((v % 16) + 24) % 16 - 8)) << x;
    EXPECT_EQ(FloatToNarrow(kUint4, x), ((v % 16) + 16) % 16) << x;
    EXPECT_EQ(static_cast<int8_t>(IntegerToNarrow(kInt2, v)), ((v % 4) + 6) % 4 - 2) << v;
    EXPECT_EQ(IntegerToNarrow(kUint2, v), ((v % 4) + 4) % 4) << v;
  }
  EXPECT_EQ(FloatToNarrow(kInt4, std::numeric_limits<float>::quiet_NaN()), 0);
  EXPECT_EQ(FloatToNarrow(kUint4, 1e30f), 0);  // 1e30 is a multiple of 16
  EXPECT_EQ(NarrowToFloat(kInt4, 0xf8), -8.0f);
}

TEST(NarrowTypes, PackAndUnpackLowBitsFirst) {
  const std::vector<uint8_t> int4 = {0x07, 0xf8, 0xff, 0x01, 0x02};  // 7, -8, -1, 1, 2
  const std::string packed = PackNarrow(kInt4, int4.data(), 5);
  EXPECT_EQ(packed, std::string("\x87\x1f\x02", 3));
  std::vector<uint8_t> back(5);
  UnpackNarrow(kInt4, reinterpret_cast<const uint8_t*>(packed.data()), 5, back.data());
  EXPECT_EQ(back, int4);
  const std::vector<uint8_t> uint2 = {1, 2, 3, 0, 1};
  const std::string packed2 = PackNarrow(kUint2, uint2.data(), 5);
  EXPECT_EQ(packed2, std::string("\x39\x01", 2));
  std::vector<uint8_t> back2(5);
  UnpackNarrow(kUint2, reinterpret_cast<const uint8_t*>(packed2.data()), 5, back2.data());
  EXPECT_EQ(back2, uint2);
  EXPECT_EQ(ElementsPerFileByte(kFloat8E5M2), 1);
}

// A model file packs int4; a tensor holds one element per byte; the two round-trip.
TEST(NarrowTypes, ProtoRoundTripPacksAndUnpacks) {
  auto tensor = Tensor::Create(kInt4, {3});
  ASSERT_TRUE(tensor.ok());
  const uint8_t values[] = {0x07, 0xf8, 0xff};
  std::memcpy(tensor->raw_data(), values, 3);
  auto bytes = TensorToProtoBytes(*tensor, "t");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_NE(bytes->find(std::string("\x87\x0f", 2)), std::string::npos);  // packed raw_data
  auto back = TensorFromProtoBytes(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->type(), kInt4);
  ASSERT_EQ(back->shape(), std::vector<int64_t>{3});
  EXPECT_EQ(std::vector<uint8_t>(back->data<uint8_t>(), back->data<uint8_t>() + 3),
            std::vector<uint8_t>(values, values + 3));
  EXPECT_EQ(NarrowToFloat(kInt4, back->data<uint8_t>()[1]), -8.0f);
}

// The Cast kernel: double rounds once to float8 (not through float32), and saturate=0 reaches NaN.
TEST(NarrowTypes, CastKernelRoundsDoubleOnceAndHonoursSaturate) {
  using testing::Attrs;
  // 1 + 2^-4 + 2^-40 is just above the tie between 1 and 1.125 in E4M3: it must round up,
  // although rounding to float32 first would make it an exact tie (to 1.0, the even code).
  const double x = 1.0 + 0.0625 + std::ldexp(1.0, -40);
  auto input = testing::Make<double>({2}, {x, 1000.0});
  auto out = testing::RunOp("Cast", 19, Attrs({{"to", int64_t{17}}}), {input});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<uint8_t>()[0], 0x39);  // 1.125
  EXPECT_EQ((*out)[0].data<uint8_t>()[1], 0x7e);  // saturated to 448
  auto no_saturate = testing::RunOp("Cast", 19, Attrs({{"to", int64_t{17}}, {"saturate", int64_t{0}}}), {input});
  ASSERT_TRUE(no_saturate.ok()) << no_saturate.status();
  EXPECT_EQ((*no_saturate)[0].data<uint8_t>()[1], 0x7f);  // NaN
  auto back = testing::RunOp("Cast", 19, Attrs({{"to", int64_t{1}}}), {(*out)[0]});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)[0].data<float>()[0], 1.125f);
  auto bad = testing::RunOp("Cast", 19, Attrs({{"to", int64_t{17}}, {"saturate", int64_t{2}}}), {input});
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace attune
