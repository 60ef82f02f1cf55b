#include "ops/attention/attention_materialized.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/common/status_macros.h"
#include "ops/attention/kernels/attention_mask.h"

namespace attune::attention {
namespace {

constexpr double kHidden = -std::numeric_limits<double>::infinity();

const float* Row(const StridedView& v, int64_t b, int64_t h, int64_t t) {
  return v.data + b * v.stride_batch + h * v.stride_head + t * v.stride_seq;
}

// The structural masks of AttentionArgs, as its header defines them.
bool KeyHidden(const AttentionArgs& a, int64_t b, int64_t i, int64_t j) {
  if (a.kv_valid_len != nullptr && j >= a.kv_valid_len[b]) return true;
  if (a.causal && j > i + a.causal_offset) return true;
  return a.window > 0 && j <= i + a.causal_offset - a.window;
}

void ComputeRow(const AttentionArgs& a, int64_t b, int64_t h, int64_t i, float* qk_row, QkOutputMode mode,
                std::vector<double>& scores, std::vector<double>& acc) {
  const int64_t kv_h = h / (a.q_heads / a.kv_heads);
  const float* q = Row(a.q, b, h, i);
  const float* bias = a.bias.data != nullptr ? Row(a.bias, b, h, i) : nullptr;
  auto record = [&](QkOutputMode stage, int64_t j, double value) {
    if (qk_row != nullptr && mode == stage) qk_row[j] = static_cast<float>(value);
  };

  double max_score = kHidden;
  bool nan_score = false;
  for (int64_t j = 0; j < a.kv_len; ++j) {
    // As the subgraph's MatMul gives it: infinite where it overflows.
    double s = Float32Dot(q, Row(a.k, b, kv_h, j), a.head_dim, a.score_limit) * a.scale;
    record(QkOutputMode::kScaled, j, s);
    if (a.softcap > 0.0f) s = a.softcap * std::tanh(s / a.softcap);
    record(QkOutputMode::kSoftcapped, j, s);
    if (KeyHidden(a, b, i, j)) {
      // A mask added to the scores keeps a NaN or +inf score (-inf + it is NaN); Where replaces it.
      const bool kept = s != s || s == -kHidden;
      s = kept && a.hidden_nonfinite.structural ? std::numeric_limits<double>::quiet_NaN() : kHidden;
    } else if (bias != nullptr) {
      s = static_cast<float>(s) + bias[j];  // in float, as the subgraph's Add (see attention_reference.cc)
    }
    record(QkOutputMode::kMasked, j, s);
    scores[j] = s;
    if (s != s) {
      nan_score = true;
    } else if (s > max_score) {
      max_score = s;
    }
  }
  // A NaN score makes the subgraph's softmax of the row NaN at every key.
  if (nan_score) max_score = std::numeric_limits<double>::quiet_NaN();

  float* y = a.y + b * a.y_stride_batch + h * a.y_stride_head + i * a.y_stride_seq;
  std::fill(acc.begin(), acc.end(), 0.0);
  if (max_score == kHidden) {  // no visible key: as a.masked_rows says
    std::vector<double> weights(static_cast<size_t>(a.kv_len));
    MaskedRowWeights(a, b, h, i, weights.data());
    for (int64_t j = 0; j < a.kv_len; ++j) record(QkOutputMode::kSoftmax, j, weights[j]);
    WriteMaskedRow(a, b, h, i);
    return;
  }
  // The sink joins the max and the denominator and weights no value (a NaN
  // or +inf sink makes the row NaN, as the subgraph's softmax does).
  const double sink = SinkOf(a, h);
  if (std::isnan(sink) || sink == std::numeric_limits<double>::infinity()) max_score = sink;
  max_score = std::max(max_score, sink);
  double sum = std::exp(sink - max_score);
  for (int64_t j = 0; j < a.kv_len; ++j) {
    scores[j] = scores[j] == kHidden ? 0.0 : std::exp(scores[j] - max_score);
    sum += scores[j];
  }
  for (int64_t j = 0; j < a.kv_len; ++j) {
    const double p = scores[j] / sum;
    record(QkOutputMode::kSoftmax, j, p);
    if (p == 0.0) continue;
    const float* v = Row(a.v, b, kv_h, j);
    for (int64_t d = 0; d < a.v_head_dim; ++d) acc[d] += p * v[d];
  }
  for (int64_t d = 0; d < a.v_head_dim; ++d) y[d] = static_cast<float>(acc[d]);
}

}  // namespace

absl::Status RunMaterializedAttention(const AttentionArgs& a, float* qk, QkOutputMode qk_mode) {
  RETURN_IF_ERROR(ValidateAttentionArgs(a));
  const int64_t rows = a.batch * a.q_heads * a.q_len;
  if (rows == 0) return absl::OkStatus();
#pragma omp parallel num_threads(a.threads > 0 ? a.threads : omp_get_max_threads())
  {
    std::vector<double> scores(static_cast<size_t>(a.kv_len));
    std::vector<double> acc(static_cast<size_t>(a.v_head_dim));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r % a.q_len;
      const int64_t h = (r / a.q_len) % a.q_heads;
      const int64_t b = r / (a.q_len * a.q_heads);
      float* qk_row = qk != nullptr ? qk + r * a.kv_len : nullptr;
      ComputeRow(a, b, h, i, qk_row, qk_mode, scores, acc);
    }
  }
  return absl::OkStatus();
}

}  // namespace attune::attention
