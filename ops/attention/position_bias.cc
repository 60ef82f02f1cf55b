#include "ops/attention/position_bias.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"

namespace attune::attention {

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
              "]; this fused attention was proven for finite entries below 2^100 in magnitude, NaN and "
              "infinities (run unfused for others)"));
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
