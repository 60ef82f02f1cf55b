#include "ops/attention/kernels/attention_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/attention/kernels/attention_mask.h"

namespace attune::attention {
namespace {

constexpr double kMasked = -std::numeric_limits<double>::infinity();

void ReferenceRow(const AttentionArgs& a, int64_t b, int64_t h, int64_t i, std::vector<double>& scores,
                  std::vector<double>& acc) {
  float* y = OutputRow(a, b, h, i);
  const KeyRange keys = VisibleKeys(a, b, i);
  const int64_t kvh = KvHeadOf(a, h);
  const float* q = RowOf(a.q, b, h, i);
  const float* bias = a.bias.data != nullptr ? RowOf(a.bias, b, h, i) : nullptr;

  double max_score = kMasked;
  for (int64_t j = keys.begin; j < keys.end; ++j) {
    const float* k = RowOf(a.k, b, kvh, j);
    double s = Float32Dot(q, k, a.head_dim) * a.scale;
    // The bias is added in float, as the subgraph's Add does: with a large
    // bias (-1e9) that rounding is what makes a row of biased scores equal.
    if (bias != nullptr) s = static_cast<float>(s) + bias[j];
    // A -inf bias hides the key even with softcap (tanh would map it to -softcap).
    if (a.softcap > 0.0f && s != kMasked) s = a.softcap * std::tanh(s / a.softcap);
    scores[j - keys.begin] = s;
    if (s > max_score) max_score = s;
  }

  std::fill(acc.begin(), acc.end(), 0.0);
  if (max_score == kMasked) {  // no visible key
    WriteMaskedRow(a, b, h, i);
    return;
  }
  // The sink joins the max and the denominator, and weights no value.
  const double sink = SinkOf(a, h);
  if (std::isnan(sink) || sink == std::numeric_limits<double>::infinity()) {
    std::fill(y, y + a.v_head_dim, std::numeric_limits<float>::quiet_NaN());
    return;
  }
  max_score = std::max(max_score, sink);
  double sum = std::exp(sink - max_score);
  for (int64_t j = keys.begin; j < keys.end; ++j) {
    const double s = scores[j - keys.begin];
    if (s == kMasked) continue;
    const double p = std::exp(s - max_score);
    sum += p;
    const float* v = RowOf(a.v, b, kvh, j);
    for (int64_t d = 0; d < a.v_head_dim; ++d) acc[d] += p * v[d];
  }
  for (int64_t d = 0; d < a.v_head_dim; ++d) y[d] = static_cast<float>(acc[d] / sum);
}

}  // namespace

void RunAttentionReference(const AttentionArgs& a) {
  const int64_t rows = a.batch * a.q_heads * a.q_len;
  if (rows == 0 || a.v_head_dim == 0) return;
#pragma omp parallel num_threads(TeamSize(a))
  {
    std::vector<double> scores(static_cast<size_t>(a.kv_len));
    std::vector<double> acc(static_cast<size_t>(a.v_head_dim));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r % a.q_len;
      const int64_t h = (r / a.q_len) % a.q_heads;
      const int64_t b = r / (a.q_len * a.q_heads);
      ReferenceRow(a, b, h, i, scores, acc);
    }
  }
}

}  // namespace attune::attention
