// attune.MultiHeadAttention's probabilities output (output 3) against the
// softmax written here in double from the op's definition: causal, key
// padding (rows with no visible key NaN, masked_rows "nan"), NaN and +inf in
// Q, every thread count the same bits; the output Y with the probabilities
// asked for agrees with Y without them (the flash kernels); the policies the
// row-by-row path does not model are refused with one line.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "absl/strings/match.h"
#include "core/schema/multi_head_attention.h"
#include "gtest/gtest.h"
#include "tests/common/graph_builder.h"
#include "tests/common/kernel_runner.h"

namespace attune::testing {
namespace {

constexpr int64_t kB = 2, kH = 3, kT = 7, kD = 8;

struct Case {
  std::vector<float> q, k, v;
  std::vector<uint8_t> shows;  // key padding [B][T]: 0 pads
};

Case MakeCase(unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  Case c;
  for (auto* x : {&c.q, &c.k, &c.v}) {
    x->resize(kB * kH * kT * kD);
    for (float& f : *x) f = normal(gen);
  }
  c.shows.assign(kB * kT, 1);
  c.shows[0] = c.shows[1] = 0;            // batch 0 left-padded: its first two rows see no key
  c.shows[kT + kT - 1] = 0;               // batch 1 right-padded
  return c;
}

KernelCall Call(const Case& c, int num_outputs, int threads) {
  KernelCall call;
  call.op_type = mha::kOpType;
  call.domain = mha::kDomain;
  call.opset = 1;
  call.attributes.Set(mha::kNumHeads, kH);
  call.attributes.Set(mha::kCausal, int64_t{1});
  call.attributes.Set(mha::kMaskedRows, std::string("nan"));
  for (const auto* x : {&c.q, &c.k, &c.v}) call.inputs.push_back(Floats({kB, kH, kT, kD}, *x));
  call.inputs.resize(mha::kInputKeyPadding, Tensor());
  auto shows = Tensor::Create(ElementType::kBool, {kB, kT});
  for (int64_t i = 0; i < kB * kT; ++i) shows->data<bool>()[i] = c.shows[i] != 0;
  call.inputs.push_back(*shows);
  call.num_outputs = num_outputs;
  call.options.threads = threads;
  return call;
}

// The softmax of the masked scores, in double: NaN rows where no key is visible or a score is NaN.
std::vector<double> Reference(const Case& c) {
  std::vector<double> p(kB * kH * kT * kT);
  const double scale = 1.0 / std::sqrt(static_cast<double>(kD));
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t h = 0; h < kH; ++h)
      for (int64_t i = 0; i < kT; ++i) {
        std::vector<double> s(kT, -INFINITY);
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < kD; ++d)
            dot += static_cast<double>(c.q[((b * kH + h) * kT + i) * kD + d]) * c.k[((b * kH + h) * kT + j) * kD + d];
          s[j] = c.shows[b * kT + j] ? dot * scale : -INFINITY;
        }
        double top = -INFINITY, sum = 0;
        for (double x : s) top = std::isnan(x) || std::isnan(top) ? NAN : std::max(top, x);
        for (double& x : s) sum += (x = std::exp(x - top));
        double* row = &p[((b * kH + h) * kT + i) * kT];
        for (int64_t j = 0; j < kT; ++j) row[j] = s[j] / sum;  // NaN when top is -inf or NaN
      }
  return p;
}

void ExpectProbabilities(const Case& c) {
  const std::vector<double> want = Reference(c);
  std::vector<Tensor> first;
  for (int threads : {1, 2, 3, 4}) {
    auto out = RunKernel(Call(c, mha::kOutputProbabilities + 1, threads));
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& got = (*out)[mha::kOutputProbabilities];
    ASSERT_EQ(got.shape(), (std::vector<int64_t>{kB, kH, kT, kT}));
    for (int64_t i = 0; i < got.num_elements(); ++i) {
      const double g = got.data<float>()[i];
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(g)) << "at " << i;
      } else {
        EXPECT_NEAR(g, want[i], 1e-6) << "at " << i;
      }
    }
    if (first.empty()) {
      first = *out;
      continue;
    }
    for (int o : {int{mha::kOutputY}, int{mha::kOutputProbabilities}})
      EXPECT_EQ(std::memcmp(first[o].raw_data(), (*out)[o].raw_data(), first[o].num_elements() * sizeof(float)), 0)
          << "output " << o << " differs at " << threads << " threads";
  }
  // Y without the probabilities (the flash kernels) is Y with them.
  auto plain = RunKernel(Call(c, 1, 2));
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (int64_t i = 0; i < plain->at(0).num_elements(); ++i) {
    const float a = plain->at(0).data<float>()[i], b = first[0].data<float>()[i];
    if (std::isnan(a) || std::isnan(b)) {
      EXPECT_EQ(std::isnan(a), std::isnan(b)) << "at " << i;
    } else {
      EXPECT_NEAR(a, b, 1e-5) << "at " << i;
    }
  }
}

TEST(MhaProbabilitiesTest, AreTheSoftmaxOfTheMaskedScores) { ExpectProbabilities(MakeCase(1)); }

TEST(MhaProbabilitiesTest, ANaNOrInfiniteQueryMakesItsRowNaN) {
  Case c = MakeCase(2);
  c.q[((1 * kH + 2) * kT + 4) * kD + 3] = NAN;
  c.q[((0 * kH + 1) * kT + 5) * kD + 0] = INFINITY;
  ExpectProbabilities(c);
}

TEST(MhaProbabilitiesTest, PoliciesTheRowPathDoesNotModelAreRefused) {
  KernelCall call = Call(MakeCase(3), mha::kOutputProbabilities + 1, 1);
  call.attributes.Set(mha::kNanGuard, int64_t{1});
  auto out = RunKernel(call);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "output 3 (the probabilities)")) << out.status();
}

}  // namespace
}  // namespace attune::testing
