// The quantizer (ops/quantized/nbits_quantize.h) on its own: each weight is
// within its block's rounding step of the dequantized value, every code is in
// range, the padding of a partial block dequantizes to zero, and a weight that
// is not finite is refused with a line naming it.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ops/quantized/nbits_quantize.h"

namespace attune::testing {
namespace {

struct Layout {
  int bits, block;
  bool symmetric;
};

class NBitsQuantizeTest : public ::testing::TestWithParam<Layout> {};

TEST_P(NBitsQuantizeTest, EachWeightWithinItsStep) {
  const Layout p = GetParam();
  const int64_t k = 100, n = 7;  // K not a multiple of any block: a partial last block
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> w(k * n);
  for (float& x : w) x = dist(rng);
  for (int64_t kk = 0; kk < k; ++kk) w[kk * n + 2] = 0.0f;         // a column of zeros
  for (int64_t kk = 0; kk < k; ++kk) w[kk * n + 3] = std::fabs(w[kk * n + 3]) + 1;  // all positive
  quantized::FloatWeights fw{w.data(), ElementType::kFloat32, k, n, n, 1};
  auto c = quantized::QuantizeToNBits(fw, {p.bits, p.block, p.symmetric}, "w");
  ASSERT_TRUE(c.ok()) << c.status();
  const int64_t k_blocks = (k + p.block - 1) / p.block, blob = p.block * p.bits / 8;
  ASSERT_EQ(c->b.shape(), (std::vector<int64_t>{n, k_blocks, blob}));
  ASSERT_EQ(c->scales.shape(), (std::vector<int64_t>{n, k_blocks}));
  EXPECT_EQ(c->zero_points.empty(), p.symmetric);
  if (!p.symmetric) ASSERT_EQ(c->zero_points.shape(), (std::vector<int64_t>{n, (k_blocks * p.bits + 7) / 8}));
  for (int64_t row = 0; row < n; ++row)
    for (int64_t kb = 0; kb < k_blocks; ++kb) {
      const float scale = c->scales.data<float>()[row * k_blocks + kb];
      int zp = 1 << (p.bits - 1);
      if (!p.symmetric) {
        const uint8_t z = c->zero_points.data<uint8_t>()[row * c->zero_points.shape()[1] + kb * p.bits / 8];
        zp = p.bits == 8 ? z : (kb % 2 == 0 ? z & 15 : z >> 4);
      }
      for (int64_t i = 0; i < p.block; ++i) {
        const uint8_t* bytes = c->b.data<uint8_t>() + (row * k_blocks + kb) * blob;
        const int q = p.bits == 8 ? bytes[i] : (i % 2 == 0 ? bytes[i / 2] & 15 : bytes[i / 2] >> 4);
        const double deq = (q - zp) * static_cast<double>(scale);
        const int64_t kk = kb * p.block + i;
        if (kk >= k) {
          EXPECT_EQ(deq, 0.0) << "padding of row " << row;
          continue;
        }
        // Asymmetric: the range is covered, half a step of rounding. Symmetric:
        // the far end of the range is one code short (2^(bits-1) - 1), a full step.
        const double step = std::fabs(scale) * (p.symmetric ? 1.0 : 0.5) * (1 + 1e-5);
        EXPECT_LE(std::fabs(deq - w[kk * n + row]), step) << "row " << row << " k " << kk;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Layouts, NBitsQuantizeTest,
                         ::testing::Values(Layout{4, 32, false}, Layout{4, 32, true}, Layout{4, 16, false},
                                           Layout{4, 128, true}, Layout{8, 32, false}, Layout{8, 64, true}));

TEST(NBitsQuantize, NonFiniteWeightIsRefusedByName) {
  std::vector<float> w(64, 1.0f);
  w[10] = std::nanf("");
  quantized::FloatWeights fw{w.data(), ElementType::kFloat32, 64, 1, 1, 1};
  auto c = quantized::QuantizeToNBits(fw, {4, 32, false}, "MatMul 'proj'");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("MatMul 'proj'"), std::string::npos) << c.status();
  EXPECT_NE(c.status().message().find("not finite"), std::string::npos) << c.status();
}

TEST(NBitsQuantize, BadOptionsAreRefused) {
  std::vector<float> w(64, 1.0f);
  quantized::FloatWeights fw{w.data(), ElementType::kFloat32, 64, 1, 1, 1};
  EXPECT_FALSE(quantized::QuantizeToNBits(fw, {3, 32, false}, "w").ok());
  EXPECT_FALSE(quantized::QuantizeToNBits(fw, {4, 48, false}, "w").ok());
  EXPECT_FALSE(quantized::QuantizeToNBits(fw, {4, 8, false}, "w").ok());
}

// Rows split across threads, in slices of 1024: the same bytes for any thread count, each slice
// reported once it is done, and the first weight that cannot be quantized named as without threads.
TEST(NBitsQuantize, ThreadCountGivesTheSameBytes) {
  const int64_t k = 64, n = 2100;
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> w(k * n);
  for (float& x : w) x = dist(rng);
  quantized::FloatWeights fw{w.data(), ElementType::kFloat32, k, n, 1, k};  // [N, K]: a transposed weight
  std::vector<int64_t> done;
  fw.rows_done = [&](int64_t rows) { done.push_back(rows); };
  auto one = quantized::QuantizeToNBits(fw, {4, 32, false}, "w", 1);
  EXPECT_EQ(done, (std::vector<int64_t>{1024, 2048, 2100}));
  auto two = quantized::QuantizeToNBits(fw, {4, 32, false}, "w", 2);
  ASSERT_TRUE(one.ok() && two.ok());
  for (auto [a, b] : {std::pair{&one->b, &two->b}, {&one->scales, &two->scales}, {&one->zero_points, &two->zero_points}})
    EXPECT_EQ(0, std::memcmp(a->raw_data(), b->raw_data(), a->byte_size()));
  w[1700 * k + 9] = std::numeric_limits<float>::infinity();
  w[1500 * k + 5] = std::numeric_limits<float>::quiet_NaN();
  fw.rows_done = nullptr;
  for (int threads : {1, 2}) {
    auto bad = quantized::QuantizeToNBits(fw, {4, 32, false}, "w", threads);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("(k 5, n 1500)"), std::string::npos) << bad.status();
  }
}

}  // namespace
}  // namespace attune::testing
