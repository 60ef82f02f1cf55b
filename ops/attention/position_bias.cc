#include "ops/attention/position_bias.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/attention/kernels/attention_mask.h"

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"

namespace attune::attention {

namespace {

// Whether row `row` (kv_len entries) holds a finite entry at or beyond the limit.
bool RowHasLarge(const float* row, int64_t n) {
  bool large = false;
  for (int64_t j = 0; j < n; ++j) large |= std::fabs(row[j]) >= kPositionBiasLimit && std::isfinite(row[j]);
  return large;
}

void ExactRow(const AttentionArgs& a, int64_t b, int64_t h, int64_t i, std::vector<double>& score) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const bool nan_fills = a.masked_rows == MaskedRows::kNaN;
  const int64_t kvh = KvHeadOf(a, h);
  const float* q = RowOf(a.q, b, h, i);
  const float* x = RowOf(a.scores_bias, b, h, i);
  const uint8_t* visible = a.key_visible != nullptr ? a.key_visible + b * a.kv_len : nullptr;
  double top = -std::numeric_limits<double>::infinity();
  bool nan_row = false;
  for (int64_t j = 0; j < a.kv_len; ++j) {
    const float s = static_cast<float>(Float32Dot(q, RowOf(a.k, b, kvh, j), a.head_dim)) * a.scale;
    const float sb = s + x[j];
    const bool structural = StructurallyHidden(a, i, j);
    const bool padded = (visible != nullptr && visible[j] == 0) || j >= ValidKeys(a, b);
    float value = sb;
    if (structural || padded) {
      const float fill = nan_fills            ? neg_inf
                         : structural && padded ? a.hidden_fills.both
                         : structural           ? a.hidden_fills.causal
                                                : a.hidden_fills.padding;
      const bool adds = (!structural || a.hidden_nonfinite.structural) && (!padded || a.hidden_nonfinite.bias);
      value = !adds ? fill : a.bias_into_mask ? s + (x[j] + fill) : sb + fill;
    }
    score[j] = value;
    nan_row |= std::isnan(value) || value == std::numeric_limits<float>::infinity();
    top = std::max(top, static_cast<double>(value));
  }
  float* y = OutputRow(a, b, h, i);
  // Softmax of a row of -inf, or with a NaN or +inf score, is NaN (zeros behind a NaN guard).
  if (nan_row || top == -std::numeric_limits<double>::infinity() || a.kv_len == 0) {
    const float fill = a.nan_rows_zeroed || a.kv_len == 0 ? 0.0f : std::numeric_limits<float>::quiet_NaN();
    std::fill(y, y + a.v_head_dim, fill);
    return;
  }
  double sum = 0.0;
  for (int64_t j = 0; j < a.kv_len; ++j) {
    score[j] = std::exp(static_cast<double>(static_cast<float>(score[j] - top)));
    sum += score[j];
  }
  for (int64_t d = 0; d < a.v_head_dim; ++d) {
    double acc = 0.0;
    for (int64_t j = 0; j < a.kv_len; ++j) acc += score[j] * RowOf(a.v, b, kvh, j)[d];  // 0 · inf is NaN, as in P·V
    y[d] = static_cast<float>(acc / sum);
  }
}

}  // namespace

bool HasLargePositionBias(const AttentionShapes& s, const StridedView& bias) {
  const int64_t batches = bias.stride_batch == 0 ? 1 : s.batch;
  const int64_t heads = bias.stride_head == 0 ? 1 : s.q_heads;
  const int64_t rows = bias.stride_seq == 0 ? 1 : s.q_len;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < rows; ++i)
        if (RowHasLarge(bias.data + b * bias.stride_batch + h * bias.stride_head + i * bias.stride_seq,
                        s.total_kv_len))
          return true;
  return false;
}

void RecomputeLargePositionBiasRows(const AttentionArgs& a) {
  if (a.scores_bias.data == nullptr) return;
  std::vector<double> score(static_cast<size_t>(a.kv_len));
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t h = 0; h < a.q_heads; ++h)
      for (int64_t i = 0; i < a.q_len; ++i)
        if (RowHasLarge(RowOf(a.scores_bias, b, h, i), a.kv_len)) ExactRow(a, b, h, i, score);
}

absl::Status CheckPositionBiasRange(const AttentionParams& p, const AttentionShapes& s, const StridedView& bias) {
  const int64_t batches = bias.stride_batch == 0 ? 1 : s.batch;
  const int64_t heads = bias.stride_head == 0 ? 1 : s.q_heads;
  const int64_t rows = bias.stride_seq == 0 ? 1 : s.q_len;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < rows; ++i) {
        const float* row = bias.data + b * bias.stride_batch + h * bias.stride_head + i * bias.stride_seq;
        bool out_of_range = false;
        for (int64_t j = 0; j < s.total_kv_len; ++j) out_of_range |= std::fabs(row[j]) >= kPositionBiasLimit;
        if (!out_of_range) continue;
        for (int64_t j = 0; j < s.total_kv_len; ++j) {
          if (!std::isfinite(row[j]) || std::fabs(row[j]) < kPositionBiasLimit) continue;
          return absl::InvalidArgumentError(absl::StrCat(
              p.op_name, ": the position bias holds ", row[j], " at [", b, ", ", h, ", ", i, ", ", j,
              "]; without the fills of its hidden keys (masked_rows \"fills\") or with a softcap this fused "
              "attention computes finite entries below 2^100 in magnitude, NaN and infinities only (run "
              "unfused for others)"));
        }
      }
  return absl::OkStatus();
}

absl::StatusOr<AttentionBias> FoldKeyPadding(const KernelContext& ctx, const AttentionParams& p,
                                             const AttentionShapes& s, const StridedView& bias,
                                             const KeyPadding& padding) {
  const int64_t heads = bias.stride_head == 0 ? 1 : s.q_heads;
  const int64_t rows = bias.stride_seq == 0 ? 1 : s.q_len;
  const int64_t keys = s.total_kv_len;
  AttentionBias out;
  ASSIGN_OR_RETURN(out.storage, ctx.AllocateScratch(ElementType::kFloat32, {s.batch, heads, rows, keys}));
  constexpr float kHidden = -std::numeric_limits<float>::infinity();
  const bool adds = p.hidden_nonfinite.bias;
  float* dst = out.storage.data<float>();
  for (int64_t b = 0; b < s.batch; ++b) {
    const uint8_t* visible = padding.visible.data() + b * keys;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < rows; ++i) {
        const float* src = bias.data + b * bias.stride_batch + h * bias.stride_head + i * bias.stride_seq;
        for (int64_t j = 0; j < keys; ++j) *dst++ = visible[j] != 0 ? src[j] : adds ? src[j] + kHidden : kHidden;
      }
  }
  out.view.data = out.storage.data<float>();
  out.view.stride_seq = rows == 1 ? 0 : keys;
  out.view.stride_head = heads == 1 ? 0 : rows * keys;
  out.view.stride_batch = heads * rows * keys;
  return out;
}

}  // namespace attune::attention
