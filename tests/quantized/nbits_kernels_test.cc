// Every variant of the N-bit products this CPU runs (portable, AVX2,
// AVX-512, AVX-512 VNNI) against double-precision references on the same
// quantized data: bits 2/4/8, blocks 16..128, K a multiple of the block or
// not, zero points absent / packed uint8 / float, NaN and infinities in the
// activations and in the scales; and the whole product at 1 and 2 threads.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/quantized/nbits_kernels.h"
#include "ops/quantized/nbits_weights.h"
#include "tests/quantized/nbits_test_data.h"

namespace attune::quantized {
namespace {

uint32_t Bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Same class (NaN, ±inf) and, when finite, within tol.
void ExpectClose(double want, float got, double tol, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": want NaN, got " << got;
  } else if (std::isinf(want)) {
    EXPECT_EQ(want, static_cast<double>(got)) << what;
  } else {
    EXPECT_NEAR(want, got, tol) << what;
  }
}

struct Shape {
  int64_t k, n, bits, block;
  ZeroPoints zps;
};

const Shape kShapes[] = {
    {256, 20, 4, 32, ZeroPoints::kNone},   {200, 9, 4, 32, ZeroPoints::kPacked}, {384, 7, 4, 128, ZeroPoints::kPacked},
    {96, 5, 4, 16, ZeroPoints::kNone},     {160, 6, 8, 32, ZeroPoints::kPacked}, {130, 5, 8, 64, ZeroPoints::kNone},
    {128, 5, 2, 32, ZeroPoints::kPacked},  {96, 4, 4, 32, ZeroPoints::kFloat},   {64, 3, 8, 16, ZeroPoints::kPacked},
    // Rows of the 4-bit kernels spanning several 64-byte chunks, a last partial chunk, blocks of 64 and 256.
    {1000, 11, 4, 64, ZeroPoints::kPacked}, {640, 6, 4, 256, ZeroPoints::kNone}, {2080, 9, 4, 32, ZeroPoints::kPacked},
    // Whole chunks of blocks of 16, and 8-, 4- and 1-output groups of the int8 kernel (8 + 4 + 3 outputs).
    {272, 15, 4, 16, ZeroPoints::kPacked},  {512, 17, 4, 128, ZeroPoints::kNone},
};

std::string Label(const NBitsKernelSet& ks, const Shape& s) {
  return std::string(ks.name) + " K=" + std::to_string(s.k) + " bits=" + std::to_string(s.bits) +
         " block=" + std::to_string(s.block) + " zp=" + std::to_string(static_cast<int>(s.zps));
}

TEST(NBitsKernels, FloatActivationsMatchDoubleReference) {
  for (const NBitsKernelSet& ks : AvailableNBitsKernels())
    for (const Shape& s : kShapes) {
      const Data d = MakeData(s.k, s.n, s.bits, s.block, s.zps, 7);
      auto w = NBitsWeights::Create(d.params, "test", d.b, d.scales, d.zero_points);
      ASSERT_TRUE(w.ok()) << w.status();
      std::vector<float> a = RandomRow(s.k, 11);
      a[3] = std::numeric_limits<float>::infinity();  // one row with an infinity, one with a NaN
      std::vector<float> a_nan = RandomRow(s.k, 12);
      a_nan[s.k - 1] = std::numeric_limits<float>::quiet_NaN();
      for (const auto* row : {&a, &a_nan}) {
        std::vector<float> y(s.n), dq(s.n * s.k);
        ks.gemv_float((*w)->view(), row->data(), y.data(), 0, s.n);
        ks.dequantize_rows((*w)->view(), 0, s.n, dq.data());
        for (int64_t j = 0; j < s.n; ++j) {
          double want = 0, magnitude = 0;
          for (int64_t k = 0; k < s.k; ++k) {
            want += (*row)[k] * Weight(d, j, k);
            magnitude += std::fabs((*row)[k] * Weight(d, j, k));
            if (j < 2) EXPECT_NEAR(Weight(d, j, k), dq[j * s.k + k], 1e-6 * std::fabs(Weight(d, j, k)) + 1e-12);
          }
          ExpectClose(want, y[j], 1e-5 * magnitude + 1e-9, Label(ks, s));
        }
      }
    }
}

TEST(NBitsKernels, Int8ActivationsMatchIntegerReference) {
  for (const NBitsKernelSet& ks : AvailableNBitsKernels())
    for (const Shape& s : kShapes) {
      if (s.zps == ZeroPoints::kFloat) continue;  // float zero points never take the int8 path
      const Data d = MakeData(s.k, s.n, s.bits, s.block, s.zps, 8);
      auto w = NBitsWeights::Create(d.params, "test", d.b, d.scales, d.zero_points);
      ASSERT_TRUE(w.ok()) << w.status();
      const std::vector<float> a = RandomRow(s.k, 13);
      const int64_t kb = d.params.k_blocks();
      std::vector<int8_t> q(kb * s.block);
      std::vector<float> qs(kb);
      std::vector<int32_t> sums(kb);
      ASSERT_TRUE(QuantizeRowInt8(a.data(), s.k, s.block, q.data(), qs.data(), sums.data()));
      std::vector<float> y(s.n);
      ks.gemv_int8((*w)->view(), Int8Row{q.data(), qs.data(), sums.data()}, y.data(), 0, s.n);
      // Outputs grouped differently (as another thread split would) keep their bits.
      std::vector<float> split(s.n);
      for (int64_t n0 = 0, step = 3; n0 < s.n; n0 += step, step = step == 3 ? 9 : 3)
        ks.gemv_int8((*w)->view(), Int8Row{q.data(), qs.data(), sums.data()}, split.data() + n0, n0,
                     std::min(s.n, n0 + step));
      for (int64_t j = 0; j < s.n; ++j) EXPECT_EQ(Bits(y[j]), Bits(split[j])) << Label(ks, s) << " output " << j;
      for (int64_t j = 0; j < s.n; ++j) {
        double want = 0, magnitude = 0;
        for (int64_t blk = 0; blk < kb; ++blk) {
          int64_t dot = 0;
          for (int64_t i = 0; i < s.block; ++i)
            dot += q[blk * s.block + i] * (static_cast<int64_t>(d.q[(j * kb + blk) * s.block + i]) -
                                           static_cast<int64_t>(d.zp[j * kb + blk]));
          const double f = static_cast<double>(qs[blk]) * d.scales.data<float>()[j * kb + blk];
          want += f * dot;
          magnitude += std::fabs(f * dot);
        }
        EXPECT_NEAR(want, y[j], 1e-5 * magnitude + 1e-9) << Label(ks, s);
      }
    }
}

TEST(NBitsKernels, RowQuantizerRefusesNonFiniteRows) {
  std::vector<float> a = RandomRow(64, 3);
  std::vector<int8_t> q(64);
  std::vector<float> s(2);
  std::vector<int32_t> sum(2);
  EXPECT_TRUE(QuantizeRowInt8(a.data(), 64, 32, q.data(), s.data(), sum.data()));
  for (int8_t v : q) EXPECT_GE(v, -127);
  a[40] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(QuantizeRowInt8(a.data(), 64, 32, q.data(), s.data(), sum.data()));
  a[40] = -std::numeric_limits<float>::infinity();
  EXPECT_FALSE(QuantizeRowInt8(a.data(), 64, 32, q.data(), s.data(), sum.data()));
}

// The whole product: decode rows and prefill panels, int8 and float32
// activations, non-finite scales; 1 and 2 threads give the same bits.
TEST(NBitsKernels, ProductIsThreadCountInvariantAndPropagatesNonFinite) {
  for (const NBitsKernelSet& ks : AvailableNBitsKernels())
    for (int64_t level : {0, 4})
      for (bool bad_scales : {false, true})
        for (int64_t m : {1, 3, 9}) {
          Data d = MakeData(256, 70, 4, 32, ZeroPoints::kPacked, 21);
          d.params.accuracy_level = level;
          if (bad_scales) {
            d.scales.data<float>()[5] = std::numeric_limits<float>::infinity();
            d.scales.data<float>()[8 * 3 + 1] = std::numeric_limits<float>::quiet_NaN();
          }
          auto w = NBitsWeights::Create(d.params, "test", d.b, d.scales, d.zero_points);
          ASSERT_TRUE(w.ok());
          std::vector<float> a(m * 256);
          for (int64_t r = 0; r < m; ++r) {
            const std::vector<float> row = RandomRow(256, 30 + static_cast<uint32_t>(r));
            std::copy(row.begin(), row.end(), a.begin() + r * 256);
          }
          if (m > 1) a[256 + 17] = std::numeric_limits<float>::infinity();
          std::vector<float> y1(m * 70), y2(m * 70);
          ASSERT_TRUE((*w)->Multiply(ks, a.data(), m, nullptr, y1.data(), 1).ok());
          ASSERT_TRUE((*w)->Multiply(ks, a.data(), m, nullptr, y2.data(), 2).ok());
          EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * 4)) << ks.name << " m=" << m;
          for (int64_t r = 0; r < m; ++r)
            for (int64_t j = 0; j < 70; ++j) {
              double want = 0, magnitude = 0;
              for (int64_t k = 0; k < 256; ++k) {
                want += a[r * 256 + k] * Weight(d, j, k);
                magnitude += std::fabs(a[r * 256 + k] * Weight(d, j, k));
              }
              const bool int8_row =
                  level == 4 && (m <= 4 || ks.prefill_int8 != nullptr) && !bad_scales && std::isfinite(want);
              ExpectClose(want, y1[r * 70 + j], (int8_row ? 2e-2 : 1e-5) * magnitude + 1e-9,
                          std::string(ks.name) + " m=" + std::to_string(m));
            }
        }
}

}  // namespace
}  // namespace attune::quantized
