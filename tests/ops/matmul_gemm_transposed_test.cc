// GemmTransposed (gemm_transposed.h): c = a · bᵀ with B stored [N, K], as the
// prompt's lm_head reads a tied embedding, against a double-precision
// reference: row counts around the 6-row tile (and the last tile split in
// two), K around the 16 x 16 transposes and across depth blocks, N around the
// 64-column panels.
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ops/matmul/gemm_transposed.h"
#include "tests/common/pattern_values.h"

namespace attune {
namespace {

using testing::PatternValue;
using testing::PatternValues;

TEST(GemmTransposed, MatchesReferenceAcrossTilesTransposesAndPanels) {
  if (!GemmTransposedAvailable()) GTEST_SKIP() << "GemmTransposed runs on AVX-512 machines only";
  struct Case {
    int64_t m, k, n;
  };
  const Case cases[] = {{16, 768, 1031}, {17, 16, 64}, {23, 19, 65}, {6, 1, 5},     {1, 33, 130},
                        {13, 15, 63},    {40, 1025, 70}, {7, 2500, 129}, {130, 64, 200},
                        {8, 40, 77},     {128, 16, 64},  {2, 17, 3}};
  for (const Case& t : cases) {
    // Exactly sized, so that a read past B's last row or K shows under ASan.
    const std::vector<float> a = PatternValues(t.m * t.k, 1), b = PatternValues(t.n * t.k, 2);
    std::vector<float> c1(t.m * t.n, NAN), c2(t.m * t.n, NAN);
    ASSERT_TRUE(GemmTransposed(a.data(), b.data(), c1.data(), t.m, t.k, t.n, 1).ok());
    ASSERT_TRUE(GemmTransposed(a.data(), b.data(), c2.data(), t.m, t.k, t.n, 2).ok());
    for (int64_t i = 0; i < t.m; ++i)
      for (int64_t j = 0; j < t.n; ++j) {
        double want = 0.0;
        for (int64_t p = 0; p < t.k; ++p) want += static_cast<double>(a[i * t.k + p]) * b[j * t.k + p];
        ASSERT_NEAR(c1[i * t.n + j], want, 1e-5 * (1.0 + std::sqrt(static_cast<double>(t.k))))
            << "m " << t.m << " k " << t.k << " n " << t.n << " at " << i << ", " << j;
        ASSERT_EQ(c1[i * t.n + j], c2[i * t.n + j]) << "threads differ at " << i << ", " << j;
      }
  }
}

TEST(GemmTransposed, NanAndInfinityReachOnlyTheirRowOrColumn) {
  if (!GemmTransposedAvailable()) GTEST_SKIP() << "GemmTransposed runs on AVX-512 machines only";
  constexpr int64_t m = 20, k = 40, n = 100;
  std::vector<float> a = PatternValues(m * k, 3), b = PatternValues(n * k, 4);
  a[7 * k + 33] = std::numeric_limits<float>::quiet_NaN();  // row 7 of C
  b[70 * k + 5] = std::numeric_limits<float>::infinity();   // column 70 of C
  std::vector<float> c(m * n, 0.0f);
  ASSERT_TRUE(GemmTransposed(a.data(), b.data(), c.data(), m, k, n, 2).ok());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float v = c[i * n + j];
      if (i == 7) {
        EXPECT_TRUE(std::isnan(v)) << i << ", " << j;
      } else if (j == 70) {
        // a[i][5] · inf: ±inf by the sign of a[i][5].
        EXPECT_TRUE(std::isinf(v) && std::signbit(v) == std::signbit(a[i * k + 5])) << i << ", " << j << ": " << v;
      } else {
        EXPECT_TRUE(std::isfinite(v)) << i << ", " << j;
      }
    }
}

TEST(GemmTransposed, EmptySumIsZero) {
  if (!GemmTransposedAvailable()) GTEST_SKIP() << "GemmTransposed runs on AVX-512 machines only";
  std::vector<float> c(3 * 4, NAN);
  ASSERT_TRUE(GemmTransposed(nullptr, nullptr, c.data(), 3, 0, 4, 2).ok());
  for (float v : c) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace attune
