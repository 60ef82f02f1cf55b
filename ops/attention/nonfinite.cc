#include "ops/attention/nonfinite.h"

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

bool NanScore(double s) { return std::isnan(s) || s == std::numeric_limits<double>::infinity(); }

// The score of key j for row i as the subgraph computes it (Q·K·scale,
// softcap, bias), in double: only evaluated on the rare rows that hold a
// non-finite operand.
double Score(const AttentionArgs& a, int64_t b, int64_t h, int64_t kvh, int64_t i, int64_t j) {
  const float* q = RowOf(a.q, b, h, i);
  const float* k = RowOf(a.k, b, kvh, j);
  double dot = 0.0;
  for (int64_t d = 0; d < a.head_dim; ++d) dot += static_cast<double>(q[d]) * k[d];
  double s = dot * a.scale;
  if (a.softcap > 0.0f) s = a.softcap * std::tanh(s / a.softcap);
  if (a.bias.data != nullptr) s += RowOf(a.bias, b, h, i)[j];
  return s;
}

}  // namespace

// Whether the bias holds a NaN or +inf anywhere, reading each distinct row
// once (a broadcast bias has stride 0 over heads or rows).
bool BiasHasNanScores(const AttentionArgs& a) {
  if (a.bias.data == nullptr) return false;
  const int64_t batches = a.bias.stride_batch == 0 ? 1 : a.batch;
  const int64_t heads = a.bias.stride_head == 0 ? 1 : a.q_heads;
  const int64_t rows = a.bias.stride_seq == 0 ? 1 : a.q_len;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < rows; ++i) {
        const float* row = RowOf(a.bias, b, h, i);
        bool bad = false;
        for (int64_t j = 0; j < a.kv_len; ++j) bad |= NanScore(row[j]);
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
      for (int64_t j = 0; j < a.kv_len; ++j) {
        const float* v = RowOf(a.v, b, kvh, j);
        if (!AnyNonFinite(v, a.v_head_dim)) continue;
        for (int64_t d = 0; d < a.v_head_dim; ++d) {
          if (std::isnan(v[d])) any_column = nan_column[d] = true;
          if (std::isinf(v[d])) inf_entries.push_back({j, d});
        }
      }
      std::vector<bool> bad_key(static_cast<size_t>(a.kv_len), false);
      bool any_key = false;
      for (int64_t j = 0; j < a.kv_len; ++j)
        if (AnyNonFinite(RowOf(a.k, b, kvh, j), a.head_dim)) any_key = bad_key[j] = true;
      for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
        for (int64_t i = 0; i < a.q_len; ++i) {
          const bool bad_query = AnyNonFinite(RowOf(a.q, b, h, i), a.head_dim);
          const float* bias = a.bias.data != nullptr ? RowOf(a.bias, b, h, i) : nullptr;
          bool bad_bias = false;
          for (int64_t j = 0; bias_suspect && j < a.kv_len; ++j) bad_bias |= NanScore(bias[j]);
          bool nan_row = false;
          if (bad_query || any_key || bad_bias) {
            const KeyRange r = VisibleKeys(a, b, i);
            for (int64_t j = r.begin; j < r.end && !nan_row; ++j) {
              if (!(bad_query || bad_key[j] || (bias != nullptr && NanScore(bias[j])))) continue;
              nan_row = NanScore(Score(a, b, h, kvh, i, j));
            }
          }
          if (nan_row) {
            FillRow(a, b, h, i);
            continue;
          }
          float* y = OutputRow(a, b, h, i);
          if (any_column)
            for (int64_t d = 0; d < a.v_head_dim; ++d)
              if (nan_column[d]) y[d] = kNaN;
          if (!inf_entries.empty()) {
            const KeyRange r = VisibleKeys(a, b, i);
            for (auto [j, d] : inf_entries) {
              const bool shown = j >= r.begin && j < r.end &&
                                 (bias == nullptr || bias[j] != -std::numeric_limits<float>::infinity());
              if (!shown) y[d] = kNaN;
            }
          }
        }
      }
    }
  }
}

}  // namespace attune::attention
