#include "ops/attention/key_padding.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"

namespace attune::attention {
namespace {

// The entries as doubles (every integer a mask holds is exact below 2^53).
absl::StatusOr<std::vector<double>> EntriesOf(const Tensor& t, const char* op) {
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  switch (t.type()) {
    case ElementType::kBool:
      for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<bool>()[i] ? 1.0 : 0.0;
      return out;
    case ElementType::kInt64:
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(t.data<int64_t>()[i]);
      return out;
    case ElementType::kInt32:
      for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<int32_t>()[i];
      return out;
    case ElementType::kFloat32:
      for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<float>()[i];
      return out;
    default:
      return absl::InvalidArgumentError(absl::StrCat(op, ": the key padding mask must be bool, int32, int64 or float32 (got ",
                                                     ElementTypeName(t.type()), ")"));
  }
}

// How the mask's L entries per batch map onto the S keys: 1 reads entry j for
// key j, 0 reads entry 0 for every key (L == 1 broadcast), -1 reads none (an
// empty computation that the subgraph's view lets any L through).
absl::StatusOr<int> KeyStride(const AttentionParams& p, const AttentionShapes& s, const Tensor& mask) {
  const int64_t keys = s.total_kv_len;
  if (mask.rank() != 2 || mask.shape()[0] != s.batch) {
    return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": the key padding mask must have shape [", s.batch, ", ",
                                                   keys, "] (batch, keys with the past), got ", mask.DebugString()));
  }
  const int64_t length = mask.shape()[1];
  if (length == keys) return 1;
  const bool broadcasts = p.key_padding_length != KeyPaddingLength::kKeys;
  if (broadcasts && length == 1) return 0;
  if (p.key_padding_length == KeyPaddingLength::kBroadcastViewed && keys == 1 && s.batch * s.q_len == 0) return -1;
  if (!broadcasts) {
    return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": the key padding mask must have shape [", s.batch, ", ",
                                                   keys, "] (batch, keys with the past), got ", mask.DebugString()));
  }
  if (keys == 1)  // it broadcasts, but gives the scores `length` keys, which the subgraph refuses
    return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": the key padding mask has ", length, " keys (",
                                                   mask.DebugString(), ") where the attention has 1 with the past: "
                                                   "broadcast, it gives the scores ", length,
                                                   " keys, which the replaced subgraph refuses (its length must be 1)"));
  return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": the key padding mask has ", length, " keys (",
                                                 mask.DebugString(), "), which do not broadcast against the ", keys,
                                                 " keys with the past: its length must be ", keys, " or 1"));
}

}  // namespace

absl::StatusOr<KeyPadding> PrepareKeyPadding(const KernelContext& ctx, const AttentionParams& p,
                                             const AttentionShapes& s, const Tensor& mask) {
  ASSIGN_OR_RETURN(const int stride, KeyStride(p, s, mask));
  ASSIGN_OR_RETURN(std::vector<double> given, EntriesOf(mask, p.op_name));
  // The entries per key, as the subgraph broadcasts them (none read: every key shows).
  std::vector<double> entries(static_cast<size_t>(s.batch * s.total_kv_len), 1.0);
  const int64_t length = mask.shape()[1];
  if (stride >= 0)
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t j = 0; j < s.total_kv_len; ++j) entries[b * s.total_kv_len + j] = given[b * length + j * stride];
  KeyPadding kp;
  kp.visible.resize(entries.size());
  kp.valid_keys.assign(static_cast<size_t>(s.batch), 0);
  ASSIGN_OR_RETURN(kp.storage, ctx.AllocateScratch(ElementType::kFloat32, {s.batch, s.total_kv_len}));
  float* bias = kp.storage.data<float>();
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t j = 0; j < s.total_kv_len; ++j) {
      const size_t at = static_cast<size_t>(b * s.total_kv_len + j);
      const double x = entries[at];
      // NaN is not zero, so it counts as visible in a C-style test; the
      // binary reading refuses it like any other value.
      if (p.key_padding_values == KeyPaddingValues::kBinary && x != 0.0 && x != 1.0) {
        return absl::InvalidArgumentError(
            absl::StrCat(p.op_name, ": the key padding mask holds ", x, " at [", b, ", ", j * stride,
                         "]; this fused attention was proven for the values 0 and 1 only (run unfused for others)"));
      }
      const bool shows = x != 0.0;
      kp.visible[at] = shows ? 1 : 0;
      bias[at] = shows ? 0.0f : -std::numeric_limits<float>::infinity();
      if (shows) kp.valid_keys[static_cast<size_t>(b)] = j + 1;
      kp.every_key_visible = kp.every_key_visible && shows;
    }
  }
  kp.bias.data = bias;
  kp.bias.stride_batch = s.total_kv_len;
  kp.bias.stride_head = 0;
  kp.bias.stride_seq = 0;
  return kp;
}

}  // namespace attune::attention
