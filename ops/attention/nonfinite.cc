#include "ops/attention/nonfinite.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "ops/attention/kernels/attention_mask.h"

namespace attune::attention {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// An exponent of all ones is NaN or ±inf; the integer test vectorises where
// std::isfinite in a loop does not, and this scan runs over every K and V row.
bool AnyNonFinite(const float* x, int64_t n) {
  uint32_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof(bits));
    bad |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return bad != 0;
}

void FillRow(const AttentionArgs& a, int64_t b, int64_t h, int64_t i) {
  float* y = OutputRow(a, b, h, i);
  for (int64_t d = 0; d < a.v_head_dim; ++d) y[d] = kNaN;
}

double Norm(const float* x, int64_t n) {
  double sum = 0.0;
  for (int64_t d = 0; d < n; ++d) sum += static_cast<double>(x[d]) * x[d];
  return std::sqrt(sum);
}

// |Q·K| at and above which the subgraph's score is ±inf: score_limit, and
// at most float32's range, where the score MatMul overflows even when the
// kernels (which scale Q before the dot product) stay finite.
double ScoreLimit(const AttentionArgs& a) {
  return std::min<double>(a.score_limit, std::numeric_limits<float>::max());
}

// An upper bound of |x| for a row of n entries: with a float16 limit the
// norm itself; for float32's range sqrt(n)·max|x_d|, one float pass (this
// runs over every K row and every query row of every call).
double NormBound(const AttentionArgs& a, const float* x, int64_t n) {
  if (std::isfinite(a.score_limit)) return Norm(x, n);
  float largest = 0.0f;
  for (int64_t d = 0; d < n; ++d) largest = std::max(largest, std::fabs(x[d]));
  return std::sqrt(static_cast<double>(n)) * largest;
}

// The largest |k_j| of one KV head (a bound of it): |q·k| <= |q|·|k| tells
// which rows cannot reach the score limit.
double LargestKeyNorm(const AttentionArgs& a, int64_t b, int64_t kvh) {
  double largest = 0.0;
  for (int64_t j = 0; j < a.kv_len; ++j) largest = std::max(largest, NormBound(a, RowOf(a.k, b, kvh, j), a.head_dim));
  return largest;
}

bool NanScore(double s) { return std::isnan(s) || s == std::numeric_limits<double>::infinity(); }

// Whether key j of batch b is padding (a zero of the key padding input).
bool PaddedKey(const AttentionArgs& a, int64_t b, int64_t j) {
  return a.key_visible != nullptr && a.key_visible[b * a.kv_len + j] == 0;
}

// The bias the subgraph adds to the scores themselves: a position bias as it
// was given (before the key padding was folded into a.bias), or a.bias.
const StridedView& ScoreBias(const AttentionArgs& a) { return a.bias_is_scores ? a.scores_bias : a.bias; }

// Whether score bias entry x gives a score the kernels' softmax does not
// compute as the subgraph does: NaN or +inf; and in a position bias, -inf (a
// -inf score, which the kernels read as a hidden key; whether it reaches the
// softmax where a mask hides the key is ReachesSoftmax's question).
bool SuspectBias(const AttentionArgs& a, float x) {
  if (NanScore(x)) return true;
  return a.bias_is_scores && x == -std::numeric_limits<float>::infinity();
}

// The score of key j for row i as the subgraph computes it (Q·K·scale,
// softcap, bias), in double: only evaluated on the rare rows that hold a
// non-finite operand.
double Score(const AttentionArgs& a, int64_t b, int64_t h, int64_t kvh, int64_t i, int64_t j) {
  const float* q = RowOf(a.q, b, h, i);
  const float* k = RowOf(a.k, b, kvh, j);
  double s = Float32Dot(q, k, a.head_dim, a.score_limit) * a.scale;
  if (a.softcap > 0.0f) s = a.softcap * std::tanh(s / a.softcap);
  const StridedView& bias = ScoreBias(a);
  if (bias.data != nullptr) s = static_cast<float>(s) + RowOf(bias, b, h, i)[j];
  return s;
}

// Whether key j's score reaches row i's softmax in the subgraph: it is
// visible, or every part that hides it adds to the score instead of
// replacing it (HiddenNonFinite).
bool ReachesSoftmax(const AttentionArgs& a, int64_t b, int64_t i, int64_t j, const float* bias) {
  if (StructurallyHidden(a, i, j) && !a.hidden_nonfinite.structural) return false;
  // A position bias hides nothing itself: only the padding folded into it does.
  const bool bias_hides = j >= ValidKeys(a, b) ||
                          (a.bias_is_scores ? PaddedKey(a, b, j)
                                            : bias != nullptr && bias[j] == -std::numeric_limits<float>::infinity());
  return !bias_hides || a.hidden_nonfinite.bias;
}

}  // namespace

// Whether the bias holds a NaN or +inf anywhere, reading each distinct row
// once (a broadcast bias has stride 0 over heads or rows).
bool BiasHasNanScores(const AttentionArgs& a) {
  const StridedView& bias = ScoreBias(a);
  if (bias.data == nullptr) return false;
  const int64_t batches = bias.stride_batch == 0 ? 1 : a.batch;
  const int64_t heads = bias.stride_head == 0 ? 1 : a.q_heads;
  const int64_t rows = bias.stride_seq == 0 ? 1 : a.q_len;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < rows; ++i) {
        const float* row = RowOf(bias, b, h, i);
        bool bad = false;
        for (int64_t j = 0; j < a.kv_len; ++j) bad |= SuspectBias(a, row[j]);
        if (bad) return true;
      }
  return false;
}

void PropagateNonFinite(const AttentionArgs& a) {
  const int64_t group = a.kv_heads > 0 ? a.q_heads / a.kv_heads : 1;
  const bool bias_suspect = BiasHasNanScores(a);
  for (int64_t b = 0; b < a.batch; ++b) {
    for (int64_t kvh = 0; kvh < a.kv_heads; ++kvh) {
      // V: a NaN entry makes its column NaN in every row (p · NaN); an
      // infinite one in the rows that give its key weight 0 (0 · inf), which
      // are the rows that do not see the key (those that see it sum inf).
      std::vector<bool> nan_column(static_cast<size_t>(a.v_head_dim), false);
      std::vector<std::pair<int64_t, int64_t>> inf_entries;  // (key, column)
      bool any_column = false;
      for (int64_t j = 0; j < a.kv_len && !a.v_finite; ++j) {
        const float* v = RowOf(a.v, b, kvh, j);
        if (!AnyNonFinite(v, a.v_head_dim)) continue;
        for (int64_t d = 0; d < a.v_head_dim; ++d) {
          if (std::isnan(v[d])) any_column = nan_column[d] = true;
          if (std::isinf(v[d])) inf_entries.push_back({j, d});
        }
      }
      std::vector<bool> bad_key(static_cast<size_t>(a.kv_len), false);
      bool any_key = false;
      for (int64_t j = 0; j < a.kv_len && !a.k_finite; ++j)
        if (AnyNonFinite(RowOf(a.k, b, kvh, j), a.head_dim)) any_key = bad_key[j] = true;
      const double key_norm = LargestKeyNorm(a, b, kvh);
      for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
        for (int64_t i = 0; i < a.q_len; ++i) {
          const float* q = RowOf(a.q, b, h, i);
          // A row whose scores may reach score_limit is read score by score,
          // as one with a non-finite query entry is.
          const bool bad_query = AnyNonFinite(q, a.head_dim) ||
                                 (key_norm > 0.0 && NormBound(a, q, a.head_dim) * key_norm >= ScoreLimit(a));
          const float* bias = a.bias.data != nullptr ? RowOf(a.bias, b, h, i) : nullptr;
          const StridedView& score_view = ScoreBias(a);
          const float* score_bias = score_view.data != nullptr ? RowOf(score_view, b, h, i) : nullptr;
          bool bad_bias = false;
          for (int64_t j = 0; bias_suspect && j < a.kv_len; ++j) bad_bias |= SuspectBias(a, score_bias[j]);
          if (!(bad_query || any_key || bad_bias || any_column || !inf_entries.empty())) continue;
          const KeyRange r = VisibleKeys(a, b, i);
          auto visible = [&](int64_t j) {
            if (!(j >= r.begin && j < r.end)) return false;
            // A position bias: the padding hides, a -inf entry gives weight 0.
            if (a.bias_is_scores)
              return !PaddedKey(a, b, j) && score_bias[j] != -std::numeric_limits<float>::infinity();
            return bias == nullptr || bias[j] != -std::numeric_limits<float>::infinity();
          };
          // The scores this row's softmax reads where an operand is not
          // finite: NaN or +inf makes the row NaN; -inf at every key it sees
          // leaves it the weights of a row that sees none.
          bool nan_row = false, finite_seen = false;
          std::vector<bool> neg_inf;
          if (bad_query || any_key || bad_bias) {
            neg_inf.assign(static_cast<size_t>(a.kv_len), false);
            for (int64_t j = 0; j < a.kv_len && !nan_row; ++j) {
              const bool seen = visible(j);
              if (!(bad_query || bad_key[j] || (score_bias != nullptr && SuspectBias(a, score_bias[j])))) {
                finite_seen |= seen;
                continue;
              }
              if (!ReachesSoftmax(a, b, i, j, bias)) continue;
              const double score = Score(a, b, h, kvh, i, j);
              nan_row = NanScore(score);
              // A -inf score counts wherever it reaches the softmax: behind an
              // additive finite mask a hidden key's score + fill is -inf too.
              if (score == -std::numeric_limits<double>::infinity()) neg_inf[j] = true;
              else finite_seen |= seen;
            }
          }
          const bool sees_some = r.end > r.begin && [&] {
            for (int64_t j = r.begin; j < r.end; ++j)
              if (visible(j)) return true;
            return false;
          }();
          float* y = OutputRow(a, b, h, i);
          if (nan_row && !a.nan_rows_zeroed) {
            FillRow(a, b, h, i);
            continue;
          }
          const bool all_neg_inf =
              !nan_row && std::find(neg_inf.begin(), neg_inf.end(), true) != neg_inf.end() && !finite_seen;
          if (all_neg_inf) WriteMaskedRow(a, b, h, i, &neg_inf);
          if (nan_row) std::fill(y, y + a.v_head_dim, 0.0f);  // behind the guard: every weight 0
          // V: the weight each key gets in this row decides what a non-finite entry gives.
          if (!any_column && inf_entries.empty()) continue;
          std::vector<double> w;
          const bool weighted = nan_row || all_neg_inf || !sees_some;
          if (weighted) {
            w.assign(static_cast<size_t>(a.kv_len), 0.0);
            if (!nan_row) MaskedRowWeights(a, b, h, i, w.data(), all_neg_inf ? &neg_inf : nullptr);
          }
          auto weight_zero = [&](int64_t j) { return weighted ? w[j] == 0.0 : !visible(j); };
          for (int64_t d = 0; d < a.v_head_dim; ++d)
            if (any_column && nan_column[d]) y[d] = kNaN;
          for (auto [j, d] : inf_entries)
            if (weight_zero(j)) y[d] = kNaN;
        }
      }
    }
  }
}

}  // namespace attune::attention
