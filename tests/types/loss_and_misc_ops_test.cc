// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, Det and ReverseSequence
// against small references written out here (plain loops, a cofactor
// expansion), with NaN inputs and the bad-input errors.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

TEST(LossOps, NegativeLogLikelihoodWithWeightAndIgnoreIndex) {
  // x [N=2, C=3, d=2], target [2, 2] with one ignored element.
  const std::vector<float> x = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, NAN};
  const std::vector<int64_t> t = {2, 0, 1, 9};  // 9 is ignore_index
  const std::vector<float> w = {0.5f, 2.0f, 4.0f};
  double sum = 0, weights = 0;
  std::vector<float> none(4, 0.0f);
  for (int n = 0; n < 2; ++n)
    for (int d = 0; d < 2; ++d) {
      const int64_t c = t[n * 2 + d];
      if (c == 9) continue;
      none[n * 2 + d] = static_cast<float>(-w[c] * x[(n * 3 + c) * 2 + d]);
      sum += -w[c] * x[(n * 3 + c) * 2 + d];
      weights += w[c];
    }
  for (const char* reduction : {"none", "sum", "mean"}) {
    auto out = RunOp("NegativeLogLikelihoodLoss", 13,
                     Attrs({{"reduction", std::string(reduction)}, {"ignore_index", int64_t{9}}}),
                     {F32({2, 3, 2}, x), I64({2, 2}, t), F32({3}, w)});
    ASSERT_TRUE(out.ok()) << out.status();
    const auto got = Values<float>((*out)[0]);
    if (std::string(reduction) == "none") {
      EXPECT_EQ(got, none);  // the NaN sits at an ignored element
    } else {
      ASSERT_EQ(got.size(), 1u);
      EXPECT_FLOAT_EQ(got[0], static_cast<float>(std::string(reduction) == "sum" ? sum : sum / weights));
    }
  }
  auto bad = RunOp("NegativeLogLikelihoodLoss", 13, {}, {F32({2, 3, 2}, x), I64({2, 2}, {0, 3, 1, 1})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("target"), std::string::npos) << bad.status();
}

TEST(LossOps, SoftmaxCrossEntropyReturnsLogProb) {
  const std::vector<float> x = {1.0f, 2.0f, 3.0f, -1.0f, 0.0f, 1000.0f};
  auto out = RunOp("SoftmaxCrossEntropyLoss", 13, {}, {F32({2, 3}, x), I64({2}, {0, 2})}, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  double loss = 0;
  std::vector<float> log_prob(6);
  for (int n = 0; n < 2; ++n) {
    double max = -INFINITY, s = 0;
    for (int c = 0; c < 3; ++c) max = std::max<double>(max, x[n * 3 + c]);
    for (int c = 0; c < 3; ++c) s += std::exp(x[n * 3 + c] - max);
    for (int c = 0; c < 3; ++c) log_prob[n * 3 + c] = static_cast<float>(x[n * 3 + c] - max - std::log(s));
  }
  loss = -(log_prob[0] + log_prob[5]) / 2.0;
  EXPECT_FLOAT_EQ(Values<float>((*out)[0])[0], static_cast<float>(loss));
  const auto got = Values<float>((*out)[1]);
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(got[i], log_prob[i]) << i;
}

TEST(MiscOps, DetMatchesCofactorExpansion) {
  const std::vector<float> a = {2, -1, 0, 1, 3, 4, 0, 5, -2, /* singular: */ 1, 2, 3, 2, 4, 6, 0, 1, 1};
  auto det = [&](int b) {
    const float* m = a.data() + 9 * b;
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
  };
  const Tensor out = Run1("Det", 11, {}, {F32({2, 3, 3}, a)});
  ASSERT_EQ(out.shape(), std::vector<int64_t>{2});
  EXPECT_NEAR(Values<float>(out)[0], det(0), 1e-5);
  EXPECT_NEAR(Values<float>(out)[1], det(1), 1e-5);
  EXPECT_FALSE(RunOp("Det", 11, {}, {F32({2, 3}, {1, 2, 3, 4, 5, 6})}).ok());
}

TEST(MiscOps, ReverseSequenceReversesEachPrefix) {
  // time_axis 0, batch_axis 1: x[t][b] = 10 t + b.
  std::vector<float> x;
  for (int t = 0; t < 4; ++t)
    for (int b = 0; b < 3; ++b) x.push_back(static_cast<float>(10 * t + b));
  const Tensor out = Run1("ReverseSequence", 10, {}, {F32({4, 3}, x), I64({3}, {4, 0, 2})});
  const auto got = Values<float>(out);
  const std::vector<int64_t> lens = {4, 0, 2};
  for (int t = 0; t < 4; ++t)
    for (int b = 0; b < 3; ++b) {
      const int from = t < lens[b] ? static_cast<int>(lens[b]) - 1 - t : t;
      EXPECT_EQ(got[t * 3 + b], 10.0f * from + b) << t << "," << b;
    }
  EXPECT_FALSE(RunOp("ReverseSequence", 10, {}, {F32({4, 3}, x), I64({3}, {5, 0, 0})}).ok());
}

}  // namespace
}  // namespace attune::testing
