// Every softmax row kernel this CPU can run, against a double-precision reference.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/common/cpu_features.h"
#include "ops/reduce/softmax_row.h"

namespace attune::reduce {
namespace {

std::vector<double> Reference(const std::vector<float>& x, bool log) {
  double m = -std::numeric_limits<double>::infinity();
  for (float v : x) m = std::max<double>(m, v);
  double sum = 0;
  for (float v : x) sum += std::exp(v - m);
  std::vector<double> y;
  for (float v : x) y.push_back(log ? (v - m) - std::log(sum) : std::exp(v - m) / sum);
  return y;
}

TEST(SoftmaxRowIsa, EveryVariantMatchesReference) {
  ASSERT_FALSE(AvailableSoftmaxRowKernels().empty());
  for (const SoftmaxRowKernel& k : AvailableSoftmaxRowKernels()) {
    for (int64_t n : {1, 7, 16, 33, 1000}) {
      std::vector<float> x(n);
      for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(std::sin(i * 0.7) * 30.0);
      if (n > 3) x[2] = -std::numeric_limits<float>::infinity();  // a masked entry
      for (bool log : {false, true}) {
        std::vector<float> y(n);
        k.fn(x.data(), y.data(), n, log);
        const std::vector<double> want = Reference(x, log);
        for (int64_t i = 0; i < n; ++i) {
          if (std::isinf(want[i])) {
            EXPECT_EQ(y[i], want[i]) << k.isa << " n=" << n << " i=" << i;
            continue;
          }
          EXPECT_NEAR(y[i], want[i], 2e-6 * std::max(1.0, std::abs(want[i])))
              << k.isa << " n=" << n << " i=" << i << " log=" << log;
        }
        if (!log && n > 3) EXPECT_EQ(y[2], 0.0f) << k.isa;
      }
    }
  }
}

TEST(SoftmaxRowIsa, FastExpHoldsAcrossTheFloatRange) {
  // exp through the kernel: softmax([0, d])[1] = e^d / (1 + e^d). Results below the
  // smallest normal float (d < -87.3) may flush to 0.
  for (const SoftmaxRowKernel& k : AvailableSoftmaxRowKernels())
    for (float d = -100.0f; d <= 0.0f; d += 0.37f) {
      const float x[2] = {0.0f, d};
      float y[2];
      k.fn(x, y, 2, false);
      const double e = std::exp(static_cast<double>(d));
      EXPECT_NEAR(y[1], e / (1 + e), 2e-6 * (e / (1 + e)) + std::numeric_limits<float>::min()) << k.isa << " d=" << d;
    }
}

// The row kernel follows the shared ISA dispatch (ATTUNE_ISA, SetForcedIsa).
TEST(SoftmaxRowIsa, SelectionFollowsTheForcedIsa) {
  for (const SoftmaxRowKernel& k : AvailableSoftmaxRowKernels()) {
    const std::optional<Isa> isa = ParseIsa(k.isa);
    ASSERT_TRUE(isa.has_value()) << k.isa;
    SetForcedIsa(*isa);
    EXPECT_EQ(SelectedSoftmaxRow(), k.fn) << k.isa;
  }
  SetForcedIsa(std::nullopt);
  for (const SoftmaxRowKernel& k : AvailableSoftmaxRowKernels())
    if (std::string(k.isa) == IsaName(ActiveIsa())) EXPECT_EQ(SelectedSoftmaxRow(), k.fn);
}

}  // namespace
}  // namespace attune::reduce
