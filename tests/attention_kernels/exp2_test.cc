// The flash kernels' exp2 polynomial, per ISA variant: its maximum relative
// error over the whole range the softmax uses, measured against double exp2.
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "ops/attention/kernels/flash_attention.h"
#include "ops/common/cpu_features.h"

namespace attune::attention::testing {
namespace {

const FlashKernels* KernelsOf(Isa isa) {
  if (!IsaSupported(isa)) return nullptr;
  switch (isa) {
    case Isa::kAvx512: return &flash_avx512::Kernels();
    case Isa::kAvx2: return &flash_avx2::Kernels();
    case Isa::kGeneric: return &flash_generic::Kernels();
  }
  return nullptr;
}

class Exp2Accuracy : public ::testing::TestWithParam<Isa> {};

TEST_P(Exp2Accuracy, MaxRelativeErrorBelowTwoUlp) {
  const FlashKernels* k = KernelsOf(GetParam());
  if (k == nullptr) GTEST_SKIP() << "CPU lacks " << IsaName(GetParam());
  // Every x in [-126, 0] on a 2^-12 grid, plus random points of [-126, 1].
  std::vector<float> x;
  for (int64_t i = 0; i <= 126 * 4096; ++i) x.push_back(-static_cast<float>(i) / 4096.0f);
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> dist(-126.0f, 1.0f);
  for (int i = 0; i < 1 << 20; ++i) x.push_back(dist(gen));
  while (x.size() % 16) x.push_back(0.0f);
  std::vector<float> y(x.size());
  k->exp2(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double max_rel = 0.0;
  float worst = 0.0f;
  for (size_t i = 0; i < x.size(); ++i) {
    const double exact = std::exp2(static_cast<double>(x[i]));
    const double rel = std::fabs(y[i] / exact - 1.0);
    if (rel > max_rel) {
      max_rel = rel;
      worst = x[i];
    }
  }
  std::printf("exp2 %s: max relative error %.3g (%.2f ulp of 2^-23) at x = %.9g\n", k->name, max_rel,
              max_rel / std::ldexp(1.0, -23), worst);
  EXPECT_LT(max_rel, 2.5e-7);

  // Masked scores and the clamp: exactly 0, never NaN; exp2(0) ~ 1.
  float special[16] = {-std::numeric_limits<float>::infinity(), -127.0f, -200.0f, -1e30f, 0.0f};
  float out[16];
  k->exp2(special, out, 16);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_NEAR(out[4], 1.0f, 2e-7f);
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Exp2Accuracy, ::testing::Values(Isa::kGeneric, Isa::kAvx2, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(IsaName(info.param)); });

}  // namespace
}  // namespace attune::attention::testing
