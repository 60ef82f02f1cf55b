#include "ops/attention/attention_bias.h"

#include <array>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/attention/float_staging.h"

namespace attune::attention {
namespace {

constexpr float kHidden = -std::numeric_limits<float>::infinity();

// Strides of a contiguous [d0][d1][d2][d3] block read as [B][H][Tq][Tkv]:
// a dimension of 1 broadcasts (stride 0).
StridedView BroadcastView(const float* data, const std::array<int64_t, 4>& d) {
  StridedView view;
  view.data = data;
  view.stride_seq = d[2] == 1 ? 0 : d[3];
  view.stride_head = d[1] == 1 ? 0 : d[2] * d[3];
  view.stride_batch = d[0] == 1 ? 0 : d[1] * d[2] * d[3];
  return view;
}

}  // namespace

absl::StatusOr<AttentionBias> PrepareAttentionBias(const KernelContext& ctx, const AttentionParams& params,
                                                   const AttentionShapes& s, const Tensor& mask) {
  const bool is_bool = mask.type() == ElementType::kBool;
  if (!is_bool && !IsStageableFloat(mask.type())) {
    return absl::InvalidArgumentError(
        absl::StrCat(params.op_name, ": attn_mask must be bool or float (got ", ElementTypeName(mask.type()), ")"));
  }
  const std::array<int64_t, 4> target = {s.batch, s.q_heads, s.q_len, s.total_kv_len};
  auto not_broadcastable = [&]() {
    return absl::InvalidArgumentError(absl::StrCat(params.op_name, ": attn_mask of shape ", ShapeToString(mask.shape()),
                                                   " does not broadcast to ", ShapeToString(target)));
  };
  if (mask.rank() < 1 || mask.rank() > 4) return not_broadcastable();
  std::array<int64_t, 4> dims = {1, 1, 1, 1};
  for (int64_t i = 0; i < mask.rank(); ++i) dims[4 - mask.rank() + i] = mask.shape()[i];
  for (int a = 0; a < 3; ++a) {
    if (dims[a] != 1 && dims[a] != target[a]) return not_broadcastable();
  }
  const int64_t mask_keys = dims[3];
  const int64_t keys = s.total_kv_len;
  if (mask_keys != keys) {
    const bool ok = params.short_mask_keys == ShortMaskKeys::kHide ? mask_keys < keys : mask_keys == 1;
    if (!ok) return not_broadcastable();
  }

  AttentionBias bias;
  if (mask.type() == ElementType::kFloat32 && mask_keys == keys) {
    bias.view = BroadcastView(mask.data<float>(), dims);
    return bias;
  }

  // Materialise at the mask's own shape, with the key axis widened to every key.
  std::array<int64_t, 4> out_dims = dims;
  out_dims[3] = keys;
  ASSIGN_OR_RETURN(bias.storage,
                   ctx.AllocateScratch(ElementType::kFloat32, {out_dims[0], out_dims[1], out_dims[2], keys}));
  Tensor staged;
  if (!is_bool) {
    ASSIGN_OR_RETURN(staged, StageAsFloat32(ctx, mask));
  }
  // Bytes, not bool: a stored byte other than 0/1 must not be undefined behaviour.
  const auto* bool_bytes = static_cast<const uint8_t*>(mask.raw_data());
  const int64_t rows = dims[0] * dims[1] * dims[2];
  float* out = bias.storage.data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < keys; ++j) {
      int64_t src = j;
      if (mask_keys != keys) {
        if (params.short_mask_keys == ShortMaskKeys::kBroadcast) {
          src = 0;
        } else if (j >= mask_keys) {
          out[r * keys + j] = kHidden;
          continue;
        }
      }
      const int64_t at = r * mask_keys + src;
      out[r * keys + j] = is_bool ? (bool_bytes[at] != 0 ? 0.0f : kHidden) : staged.data<float>()[at];
    }
  }
  bias.view = BroadcastView(out, out_dims);
  return bias;
}

}  // namespace attune::attention
