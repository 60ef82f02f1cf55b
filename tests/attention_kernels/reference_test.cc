// The reference implementation against hand-computed values.
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ops/attention/kernels/attention_args.h"
#include "ops/attention/kernels/attention_reference.h"
#include "tests/attention_kernels/attention_problem.h"

namespace attune::attention::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// With Q = 0 every visible key has the same score, so each output row is the
// mean of the visible V rows: a closed form for every structural mask.
struct MeanCase {
  bool causal;
  int64_t offset;
  int64_t window;
  std::vector<int64_t> valid;  // empty: none
};

void ExpectMeanOfVisible(const MeanCase& c, Layout layout) {
  ProblemShape s{.batch = 2, .q_heads = 4, .kv_heads = 2, .q_len = 5, .kv_len = 7, .head_dim = 3, .v_head_dim = 2};
  s.layout = layout;
  AttentionProblem p(s);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t t = 0; t < 7; ++t)
        for (int64_t d = 0; d < 3; ++d) p.k(b, h, t, d) = 0.1f * (t + d);  // irrelevant: Q = 0
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t t = 0; t < 7; ++t) {
        p.v(b, h, t, 0) = static_cast<float>(t + 10 * h + 100 * b);
        p.v(b, h, t, 1) = static_cast<float>(t * t);
      }
  AttentionArgs a = p.Args();
  a.causal = c.causal;
  a.causal_offset = c.offset;
  a.window = c.window;
  if (!c.valid.empty()) a.kv_valid_len = c.valid.data();
  ASSERT_TRUE(ValidateAttentionArgs(a).ok());
  RunAttentionReference(a);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t i = 0; i < 5; ++i) {
        int64_t lo = 0, hi = c.valid.empty() ? 7 : c.valid[b];
        if (c.causal) hi = std::min<int64_t>(hi, i + c.offset + 1);
        if (c.window > 0) lo = std::max<int64_t>(0, i + c.offset - c.window + 1);
        double m0 = 0, m1 = 0;
        for (int64_t j = lo; j < hi; ++j) {
          m0 += j + 10 * (h / 2) + 100 * b;
          m1 += j * j;
        }
        const int64_t n = hi - lo;
        if (n > 0) {
          m0 /= n;
          m1 /= n;
        }
        EXPECT_NEAR(p.y(b, h, i, 0), m0, 1e-4) << "b=" << b << " h=" << h << " i=" << i;
        EXPECT_NEAR(p.y(b, h, i, 1), m1, 1e-4) << "b=" << b << " h=" << h << " i=" << i;
      }
}

TEST(AttentionReference, MeanOfVisibleKeys) {
  for (Layout layout : {Layout::kBHTD, Layout::kBTHD}) {
    ExpectMeanOfVisible({false, 0, 0, {}}, layout);
    ExpectMeanOfVisible({true, 0, 0, {}}, layout);
    ExpectMeanOfVisible({true, 2, 0, {}}, layout);     // bottom-right: kv_len - q_len
    ExpectMeanOfVisible({true, -2, 0, {}}, layout);    // rows 0, 1 see nothing -> zeros
    ExpectMeanOfVisible({true, 2, 3, {}}, layout);     // window of 3
    ExpectMeanOfVisible({true, 0, 1, {}}, layout);     // only itself
    ExpectMeanOfVisible({false, 0, 0, {4, 0}}, layout);  // batch 1 has no key
    ExpectMeanOfVisible({true, 2, 4, {6, 3}}, layout);
  }
}

// Two keys with scores 1 and 0 (scale 0.5 of a dot product of 2).
TEST(AttentionReference, TwoKeySoftmaxByHand) {
  ProblemShape s{.q_len = 1, .kv_len = 2, .head_dim = 2, .v_head_dim = 1};
  AttentionProblem p(s);
  p.q(0, 0, 0, 0) = 1.0f;
  p.q(0, 0, 0, 1) = 1.0f;
  p.k(0, 0, 0, 0) = 2.0f;  // q·k0 = 2
  p.k(0, 0, 1, 1) = 0.0f;  // q·k1 = 0
  p.v(0, 0, 0, 0) = 3.0f;
  p.v(0, 0, 1, 0) = -1.0f;
  AttentionArgs a = p.Args();
  a.scale = 0.5f;
  RunAttentionReference(a);
  const double p0 = std::exp(1.0) / (std::exp(1.0) + 1.0);
  EXPECT_NEAR(p.y(0, 0, 0, 0), 3.0 * p0 - (1.0 - p0), 1e-6);

  // Bias 0.5 on key 1 and softcap 0.8: scores 0.8 tanh(1/0.8), 0.8 tanh(0.5/0.8).
  float bias[2] = {0.0f, 0.5f};
  a.bias.data = bias;
  a.softcap = 0.8f;
  RunAttentionReference(a);
  const double s0 = 0.8 * std::tanh(1.0 / 0.8), s1 = 0.8 * std::tanh(0.5 / 0.8);
  const double q0 = std::exp(s0) / (std::exp(s0) + std::exp(s1));
  EXPECT_NEAR(p.y(0, 0, 0, 0), 3.0 * q0 - (1.0 - q0), 1e-6);

  // -inf on key 0 hides it, even under softcap; -inf on both gives zeros.
  bias[0] = -kInf;
  RunAttentionReference(a);
  EXPECT_NEAR(p.y(0, 0, 0, 0), -1.0, 1e-6);
  bias[1] = -kInf;
  RunAttentionReference(a);
  EXPECT_EQ(p.y(0, 0, 0, 0), 0.0f);
}

// A row whose every key is hidden: -inf bias entries give what masked_rows
// asks for; finfo.min entries (finite) give equal scores, so the mean of V
// over every key, whatever the policy; a partly hidden row is a softmax over
// the rest.
TEST(AttentionReference, FullyMaskedRows) {
  ProblemShape s{.q_len = 3, .kv_len = 4, .head_dim = 2, .v_head_dim = 1};
  AttentionProblem p(s);
  for (int64_t t = 0; t < 4; ++t) {
    p.k(0, 0, t, 0) = 0.3f * t;
    p.k(0, 0, t, 1) = -0.2f * t;
    p.v(0, 0, t, 0) = static_cast<float>(1 + t * t);  // 1, 2, 5, 10: mean 4.5
  }
  for (int64_t i = 0; i < 3; ++i) {
    p.q(0, 0, i, 0) = 1.0f + i;
    p.q(0, 0, i, 1) = 0.5f;
  }
  const float finfo_min = -std::numeric_limits<float>::max();
  // Row 0: every key -inf; row 1: every key finfo.min; row 2: keys 0, 1 -inf.
  float bias[12] = {-kInf, -kInf, -kInf, -kInf, finfo_min, finfo_min, finfo_min, finfo_min, -kInf, -kInf, 0, 0};
  AttentionArgs a = p.Args();
  a.scale = 1.0f;
  a.bias.data = bias;
  a.bias.stride_seq = 4;
  const double s2 = 3.0 * 0.6 + 0.5 * -0.4, s3 = 3.0 * 0.9 + 0.5 * -0.6;  // q2·k2, q2·k3
  const double w2 = std::exp(s2) / (std::exp(s2) + std::exp(s3));
  for (MaskedRows rows : {MaskedRows::kZeros, MaskedRows::kNaN, MaskedRows::kUniform}) {
    a.masked_rows = rows;
    RunAttentionReference(a);
    if (rows == MaskedRows::kZeros) EXPECT_EQ(p.y(0, 0, 0, 0), 0.0f);
    if (rows == MaskedRows::kNaN) EXPECT_TRUE(std::isnan(p.y(0, 0, 0, 0)));
    if (rows == MaskedRows::kUniform) EXPECT_NEAR(p.y(0, 0, 0, 0), 4.5, 1e-6);
    EXPECT_NEAR(p.y(0, 0, 1, 0), 4.5, 1e-6);
    EXPECT_NEAR(p.y(0, 0, 2, 0), 5.0 * w2 + 10.0 * (1.0 - w2), 1e-5);
  }
  // No key at all: zeros under every policy (P·V sums over nothing).
  ProblemShape none{.q_len = 2, .kv_len = 0, .head_dim = 2, .v_head_dim = 3};
  AttentionProblem empty(none);
  AttentionArgs e = empty.Args();
  e.masked_rows = MaskedRows::kNaN;
  RunAttentionReference(e);
  for (float y : empty.y_buffer()) EXPECT_EQ(y, 0.0f);
}

TEST(AttentionValidate, RejectsBadShapes) {
  ProblemShape s{.q_heads = 3, .kv_heads = 2};
  AttentionProblem p(s);
  EXPECT_EQ(ValidateAttentionArgs(p.Args()).code(), absl::StatusCode::kInvalidArgument);
  AttentionProblem ok(ProblemShape{});
  AttentionArgs a = ok.Args();
  EXPECT_TRUE(ValidateAttentionArgs(a).ok());
  a.window = -1;
  EXPECT_FALSE(ValidateAttentionArgs(a).ok());
  a.window = 0;
  int64_t valid = 2;  // kv_len is 1
  a.kv_valid_len = &valid;
  EXPECT_FALSE(ValidateAttentionArgs(a).ok());
  a.kv_valid_len = nullptr;
  a.y = nullptr;
  EXPECT_FALSE(ValidateAttentionArgs(a).ok());
  a = ok.Args();
  a.softcap = -1.0f;
  EXPECT_FALSE(ValidateAttentionArgs(a).ok());
  EXPECT_FALSE(RunAttention(a, AttentionBackend::kAuto).ok());
}

}  // namespace
}  // namespace attune::attention::testing
