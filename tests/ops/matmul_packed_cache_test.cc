// A packed oneDNN weight keeps a bounded number of primitives (one per row
// count and team size), evicting the least recently used: many more row
// counts than it keeps, revisited in turn, still give the product exactly
// as a double-precision loop does.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "ops/matmul/onednn_matmul.h"

namespace attune {
namespace {

TEST(OneDnnConstantMatMulCache, ManyRowCountsEvictAndRecreatePrimitives) {
  constexpr int64_t k = 24, n = 40;
  std::vector<float> b(k * n);
  for (int64_t i = 0; i < k * n; ++i) b[i] = static_cast<float>((i * 7) % 13) / 13.0f - 0.5f;
  std::vector<float> bias(n);
  for (int64_t j = 0; j < n; ++j) bias[j] = 0.125f * static_cast<float>(j % 5);
  OneDnnConstantMatMul::Options options;
  options.bias = bias.data();
  auto packed = OneDnnConstantMatMul::Create(b.data(), k, n, options);
  ASSERT_TRUE(packed.ok()) << packed.status();
  // 150 distinct row counts, twice over: beyond any per-weight cache size.
  for (int round = 0; round < 2; ++round)
    for (int64_t m = 1; m <= 150; ++m) {
      std::vector<float> a(m * k), c(m * n, -1.0f);
      for (int64_t i = 0; i < m * k; ++i) a[i] = static_cast<float>((i * 5 + m) % 11) / 11.0f - 0.5f;
      ASSERT_TRUE((*packed)->Run(a.data(), m, c.data(), 1).ok());
      for (int64_t i = 0; i < m; i += std::max<int64_t>(1, m / 4))
        for (int64_t j = 0; j < n; ++j) {
          double want = bias[j];
          for (int64_t p = 0; p < k; ++p) want += static_cast<double>(a[i * k + p]) * b[p * n + j];
          ASSERT_NEAR(c[i * n + j], want, 1e-4) << "m " << m << " row " << i << " col " << j;
        }
    }
}

}  // namespace
}  // namespace attune
