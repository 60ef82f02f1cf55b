// The non-finite rules the fused attention follows after its kernels ran
// (ops/attention/nonfinite.h), checked row by row against what the subgraph
// computes: an additive mask keeps a NaN score at a key it hides (NaN + -inf
// is NaN, so every row is NaN), Where replaces it (only the rows that see the
// key are NaN); behind a Where(IsNaN(p), 0, p) guard those rows are zeros; a
// row whose every seen score is -inf takes the weights of a fully hidden row.
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ops/attention/kernels/attention_args.h"
#include "ops/attention/nonfinite.h"

namespace attune::attention {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t kT = 8, kD = 4;

// One batch, one head, T = 8 causal self-attention with finite Q, K, V and
// an output of ones (what a kernel wrote before the rules run).
struct Fixture {
  std::vector<float> q = std::vector<float>(kT * kD, 0.5f);
  std::vector<float> k = std::vector<float>(kT * kD, 0.25f);
  std::vector<float> v = std::vector<float>(kT * kD, 1.0f);
  std::vector<float> y = std::vector<float>(kT * kD, 1.0f);
  AttentionArgs args;

  Fixture() {
    args.batch = args.q_heads = args.kv_heads = 1;
    args.q_len = args.kv_len = kT;
    args.head_dim = args.v_head_dim = kD;
    for (auto [view, data] : {std::pair{&args.q, &q}, std::pair{&args.k, &k}, std::pair{&args.v, &v}}) {
      view->data = data->data();
      view->stride_seq = kD;
      view->stride_head = view->stride_batch = kT * kD;
    }
    args.y = y.data();
    args.y_stride_seq = kD;
    args.y_stride_head = args.y_stride_batch = kT * kD;
    args.causal = true;
    args.scale = 0.5f;
    args.masked_rows = MaskedRows::kNaN;
  }
  bool RowIsNaN(int64_t i) const {
    for (int64_t d = 0; d < kD; ++d)
      if (!std::isnan(y[i * kD + d])) return false;
    return true;
  }
  bool RowIsFinite(int64_t i) const {
    for (int64_t d = 0; d < kD; ++d)
      if (!std::isfinite(y[i * kD + d])) return false;
    return true;
  }
};

TEST(AttentionNonFiniteRules, AWhereMaskKeepsANaNKeyFromTheRowsThatDoNotSeeIt) {
  Fixture f;
  f.args.hidden_nonfinite.structural = false;  // Where(causal, s, -inf)
  f.k[5 * kD + 2] = kNaN;
  PropagateNonFinite(f.args);
  for (int64_t i = 0; i < kT; ++i) EXPECT_EQ(f.RowIsNaN(i), i >= 5) << "row " << i;
  for (int64_t i = 0; i < 5; ++i) EXPECT_TRUE(f.RowIsFinite(i)) << "row " << i;
}

TEST(AttentionNonFiniteRules, AnAdditiveMaskMakesEveryRowOfANaNKeyNaN) {
  Fixture f;
  f.args.hidden_nonfinite.structural = true;  // s + causal buffer of -inf
  f.k[5 * kD + 2] = kNaN;
  PropagateNonFinite(f.args);
  for (int64_t i = 0; i < kT; ++i) EXPECT_TRUE(f.RowIsNaN(i)) << "row " << i;
}

TEST(AttentionNonFiniteRules, AnInfiniteKeyUnderAnAdditiveMaskGivesNaNRows) {
  Fixture f;
  f.k[6 * kD] = kInf;  // q > 0, so the score is +inf; +inf + -inf is NaN where hidden
  PropagateNonFinite(f.args);
  for (int64_t i = 0; i < kT; ++i) EXPECT_TRUE(f.RowIsNaN(i)) << "row " << i;
}

TEST(AttentionNonFiniteRules, ABiasFromABooleanMaskReplacesHiddenScores) {
  Fixture f;
  f.args.causal = false;
  std::vector<float> bias(kT * kT, 0.0f);
  for (int64_t i = 0; i < kT; ++i) bias[i * kT + 3] = -kInf;  // key 3 hidden from every row
  f.args.bias = {bias.data(), 0, 0, kT};
  f.k[3 * kD + 1] = kNaN;
  f.args.hidden_nonfinite.bias = false;  // Where(keep, s, -inf)
  PropagateNonFinite(f.args);
  for (int64_t i = 0; i < kT; ++i) EXPECT_TRUE(f.RowIsFinite(i)) << "row " << i;
  f.args.hidden_nonfinite.bias = true;  // s + mask
  PropagateNonFinite(f.args);
  for (int64_t i = 0; i < kT; ++i) EXPECT_TRUE(f.RowIsNaN(i)) << "row " << i;
}

TEST(AttentionNonFiniteRules, BehindANaNGuardNaNRowsAreZerosAndNaNValuesStillShow) {
  Fixture f;
  f.args.hidden_nonfinite.structural = false;
  f.args.nan_rows_zeroed = true;
  f.q[2 * kD] = kNaN;        // row 2: NaN scores, guarded to all-zero weights
  f.v[0 * kD + 3] = kNaN;    // column 3 NaN in every row (0 · NaN)
  f.v[6 * kD + 1] = -kInf;   // column 1 NaN where key 6 has weight 0
  PropagateNonFinite(f.args);
  EXPECT_EQ(f.y[2 * kD + 0], 0.0f);
  EXPECT_EQ(f.y[2 * kD + 2], 0.0f);
  EXPECT_TRUE(std::isnan(f.y[2 * kD + 1])) << "0 · -inf in a zeroed row";
  for (int64_t i = 0; i < kT; ++i) EXPECT_TRUE(std::isnan(f.y[i * kD + 3])) << "row " << i;
  for (int64_t i = 0; i < kT; ++i)
    EXPECT_EQ(std::isnan(f.y[i * kD + 1]), i < 6) << "row " << i << ": key 6 is seen from row 6 on";
}

TEST(AttentionNonFiniteRules, ARowWhoseEverySeenScoreIsMinusInfTakesTheMaskedRowPolicy) {
  Fixture f;
  f.args.hidden_nonfinite.structural = false;
  f.k[0 * kD] = -kInf;  // q > 0: row 0 sees only key 0, whose score is -inf
  for (MaskedRows policy : {MaskedRows::kNaN, MaskedRows::kUniform}) {
    std::fill(f.y.begin(), f.y.end(), 1.0f);
    f.args.masked_rows = policy;
    PropagateNonFinite(f.args);
    if (policy == MaskedRows::kNaN) {
      EXPECT_TRUE(f.RowIsNaN(0));  // softmax of -inf everywhere
    } else {
      // Equal finite fills on keys 1..7: the mean of their V.
      for (int64_t d = 0; d < kD; ++d) EXPECT_FLOAT_EQ(f.y[d], 1.0f);
      f.v[7 * kD] = 8.0f;
      PropagateNonFinite(f.args);
      EXPECT_FLOAT_EQ(f.y[0], 2.0f) << "(6 · 1 + 8) / 7";
    }
    for (int64_t i = 1; i < kT; ++i) EXPECT_TRUE(f.RowIsFinite(i)) << "row " << i;
  }
}

TEST(AttentionNonFiniteRules, TheReferenceBackendOverflowsWhereTheFloat32ProductDoes) {
  // q·k = 4 · 1e20 · 1e20 = 4e40 overflows float32: the subgraph's MatMul
  // gives +inf there and its softmax NaN; in double it would stay finite.
  Fixture f;
  f.args.causal = false;
  std::fill(f.q.begin(), f.q.begin() + kD, 1e20f);  // row 0
  std::fill(f.k.begin() + 3 * kD, f.k.begin() + 4 * kD, 1e20f);  // key 3
  ASSERT_TRUE(RunAttention(f.args, AttentionBackend::kReference).ok());
  EXPECT_TRUE(f.RowIsNaN(0));
  for (int64_t i = 1; i < kT; ++i) EXPECT_TRUE(f.RowIsFinite(i)) << "row " << i;
  EXPECT_EQ(Float32Dot(f.q.data(), f.k.data() + 3 * kD, kD), std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(Float32Dot(f.q.data() + kD, f.k.data(), kD), 0.5);
}

// float16 scores: the subgraph's MatMul gives ±inf where |q·k| reaches 65520
// (score_limit), though float32 holds the product. Row 6 sees key 3 with
// q·k = 4 · 160 · 160 = 102400: +inf, so the row is NaN; row 7 sees key 3 with
// -102400: -inf, weight 0, and keeps the finite output the kernel wrote.
TEST(AttentionNonFiniteRules, AScoreAtTheLimitIsInfinite) {
  Fixture f;
  f.args.hidden_nonfinite.structural = false;  // Where(causal, s, fill): hidden keys are replaced
  f.args.score_limit = 65520.0f;
  std::fill(f.q.begin() + 6 * kD, f.q.begin() + 7 * kD, 160.0f);
  std::fill(f.q.begin() + 7 * kD, f.q.begin() + 8 * kD, -160.0f);
  std::fill(f.k.begin() + 3 * kD, f.k.begin() + 4 * kD, 160.0f);
  PropagateNonFinite(f.args);
  EXPECT_TRUE(f.RowIsNaN(6));
  for (int64_t i = 0; i < kT; ++i)
    if (i != 6) EXPECT_TRUE(f.RowIsFinite(i)) << "row " << i;
  // Rows 0..2 do not see key 3 (causal): its score is replaced there, as the Where does.
  EXPECT_EQ(Float32Dot(f.q.data() + 6 * kD, f.k.data() + 3 * kD, kD, f.args.score_limit),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(Float32Dot(f.q.data() + 7 * kD, f.k.data() + 3 * kD, kD, f.args.score_limit),
            -std::numeric_limits<double>::infinity());
}

// Without the limit (float32 scores) the same products are finite: nothing changes.
TEST(AttentionNonFiniteRules, WithoutALimitTheSameProductsStayFinite) {
  Fixture f;
  std::fill(f.q.begin() + 6 * kD, f.q.begin() + 7 * kD, 160.0f);
  std::fill(f.k.begin() + 3 * kD, f.k.begin() + 4 * kD, 160.0f);
  PropagateNonFinite(f.args);
  for (int64_t i = 0; i < kT; ++i) EXPECT_TRUE(f.RowIsFinite(i)) << "row " << i;
}

// A row whose every visible score overflows to -inf is a row that sees no
// key: its masked_rows policy decides it (NaN here), as the subgraph's
// softmax of a row of -inf gives NaN.
TEST(AttentionNonFiniteRules, ARowOfOverflowingNegativeScoresSeesNoKey) {
  Fixture f;
  f.args.causal = false;
  f.args.score_limit = 65520.0f;
  std::fill(f.q.begin(), f.q.begin() + kD, -160.0f);    // row 0
  std::fill(f.k.begin(), f.k.end(), 160.0f);            // every key: q·k = -102400
  PropagateNonFinite(f.args);
  EXPECT_TRUE(f.RowIsNaN(0));
  for (int64_t i = 1; i < kT; ++i) EXPECT_TRUE(f.RowIsFinite(i)) << "row " << i;
}

}  // namespace
}  // namespace attune::attention
