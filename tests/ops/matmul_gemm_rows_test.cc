// The AVX2 row GEMM on in-place weights against a double-precision loop:
// M around the 6-row tile, K across the strip's row blocks, N around the
// 16-column strip and the 4-strip copies, with and without bias; one and two
// threads bitwise equal; a NaN in A reaches exactly its output row; and
// oneDNN's in-place constant product, which takes this path on AVX2 hosts,
// agrees with the loop.
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "ops/common/cpu_features.h"
#include "ops/matmul/gemm_rows.h"
#include "ops/matmul/onednn_matmul.h"
#include "tests/common/pattern_values.h"

namespace attune {
namespace {

using testing::PatternValue;
using testing::PatternValues;

// c = a · w (+ bias) in double precision, rounded once.
std::vector<float> Reference(const std::vector<float>& a, const std::vector<float>& w, const float* bias, int64_t m,
                             int64_t k, int64_t n) {
  std::vector<float> c(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias != nullptr ? bias[j] : 0.0;
      for (int64_t kk = 0; kk < k; ++kk) acc += static_cast<double>(a[i * k + kk]) * w[kk * n + j];
      c[i * n + j] = static_cast<float>(acc);
    }
  return c;
}

class GemmRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!GemmRowsInPlaceAvailable())
      GTEST_SKIP() << "the row GEMM runs where AVX2 is the best ISA; this host's is " << IsaName(ActiveIsa());
  }
};

TEST_F(GemmRowsTest, MatchesReferenceAcrossTilesStripsAndRowBlocks) {
  const int64_t ms[] = {1, 5, 6, 7, 13, 40};
  const int64_t ks[] = {0, 1, 17, gemm_rows_detail::kStripRows, gemm_rows_detail::kStripRows + 3, 1600};
  const int64_t ns[] = {1, 15, 16, 17, 64, 65, 100};
  for (int64_t m : ms)
    for (int64_t k : ks)
      for (int64_t n : ns)
        for (bool with_bias : {false, true}) {
          const std::vector<float> a = PatternValues(m * k, 1), w = PatternValues(k * n, 2), bias = PatternValues(n, 3);
          const float* b = with_bias ? bias.data() : nullptr;
          const std::vector<float> want = Reference(a, w, b, m, k, n);
          std::vector<float> one(m * n, -7.0f), two(m * n, -7.0f);
          ASSERT_TRUE(GemmRowsInPlace(w.data(), k, n, a.data(), m, b, one.data(), 1).ok());
          ASSERT_TRUE(GemmRowsInPlace(w.data(), k, n, a.data(), m, b, two.data(), 2).ok());
          for (int64_t i = 0; i < m * n; ++i) {
            ASSERT_NEAR(one[i], want[i], 1e-5 * (1 + k)) << m << "x" << k << "x" << n << " bias " << with_bias << " at " << i;
            ASSERT_EQ(one[i], two[i]) << m << "x" << k << "x" << n << " at " << i;
          }
        }
}

TEST_F(GemmRowsTest, NanInARowReachesThatRowOnly) {
  const int64_t m = 9, k = 50, n = 33;
  std::vector<float> a = PatternValues(m * k, 4);
  const std::vector<float> w = PatternValues(k * n, 5);
  a[7 * k + 20] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> c(m * n);
  ASSERT_TRUE(GemmRowsInPlace(w.data(), k, n, a.data(), m, nullptr, c.data(), 2).ok());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) EXPECT_EQ(std::isnan(c[i * n + j]), i == 7) << i << ", " << j;
}

TEST_F(GemmRowsTest, ConstantInPlaceProductTakesIt) {
  const int64_t m = 37, k = 300, n = 70;
  const std::vector<float> a = PatternValues(m * k, 6), w = PatternValues(k * n, 7), bias = PatternValues(n, 8);
  OneDnnConstantMatMul::Options options;
  options.in_place = true;
  options.bias = bias.data();
  auto product = OneDnnConstantMatMul::Create(w.data(), k, n, options);
  ASSERT_TRUE(product.ok()) << product.status();
  std::vector<float> c(m * n), direct(m * n);
  ASSERT_TRUE((*product)->Run(a.data(), m, c.data(), 2).ok());
  ASSERT_TRUE(GemmRowsInPlace(w.data(), k, n, a.data(), m, bias.data(), direct.data(), 1).ok());
  const std::vector<float> want = Reference(a, w, bias.data(), m, k, n);
  for (int64_t i = 0; i < m * n; ++i) {
    EXPECT_EQ(c[i], direct[i]) << i;
    EXPECT_NEAR(c[i], want[i], 1e-3) << i;
  }
}

}  // namespace
}  // namespace attune
