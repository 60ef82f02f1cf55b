#include <omp.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/attention/kernels/attention_args.h"
#include "ops/attention/kernels/attention_mask.h"

namespace attune::attention {
namespace {

// Offsets and windows beyond this cannot be meaningful and could overflow
// index arithmetic (i + causal_offset + 1).
constexpr int64_t kMaxIndex = int64_t{1} << 40;

absl::Status Invalid(const char* what, int64_t value) {
  return absl::InvalidArgumentError(absl::StrCat("attention: ", what, " (got ", value, ")"));
}

}  // namespace

int TeamSize(const AttentionArgs& a) { return a.threads > 0 ? a.threads : omp_get_max_threads(); }

absl::Status ValidateAttentionArgs(const AttentionArgs& a) {
  if (a.batch < 0) return Invalid("batch must be >= 0", a.batch);
  if (a.q_heads < 0) return Invalid("q_heads must be >= 0", a.q_heads);
  if (a.kv_heads <= 0 || a.kv_heads > kMaxIndex) return Invalid("kv_heads must be > 0", a.kv_heads);
  if (a.q_heads % a.kv_heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("attention: kv_heads (", a.kv_heads, ") must divide q_heads (", a.q_heads, ")"));
  }
  if (a.q_len < 0 || a.q_len > kMaxIndex) return Invalid("q_len must be >= 0", a.q_len);
  if (a.kv_len < 0 || a.kv_len > kMaxIndex) return Invalid("kv_len must be >= 0", a.kv_len);
  if (a.head_dim < 0 || a.head_dim > kMaxIndex) return Invalid("head_dim must be >= 0", a.head_dim);
  if (a.v_head_dim < 0 || a.v_head_dim > kMaxIndex) return Invalid("v_head_dim must be >= 0", a.v_head_dim);
  if (a.window < 0 || a.window > kMaxIndex) return Invalid("window must be >= 0", a.window);
  if (a.causal_offset < -kMaxIndex || a.causal_offset > kMaxIndex) {
    return Invalid("causal_offset out of range", a.causal_offset);
  }
  if (!(a.softcap >= 0.0f) || std::isinf(a.softcap)) {
    return absl::InvalidArgumentError(absl::StrCat("attention: softcap must be finite and >= 0 (got ", a.softcap, ")"));
  }
  const bool has_output = a.batch > 0 && a.q_heads > 0 && a.q_len > 0 && a.v_head_dim > 0;
  if (!has_output) return absl::OkStatus();
  if (a.y == nullptr) return absl::InvalidArgumentError("attention: output Y has no data");
  if (a.q.data == nullptr && a.head_dim > 0) return absl::InvalidArgumentError("attention: Q has no data");
  if (a.kv_len > 0) {
    if (a.k.data == nullptr && a.head_dim > 0) return absl::InvalidArgumentError("attention: K has no data");
    if (a.v.data == nullptr) return absl::InvalidArgumentError("attention: V has no data");
  }
  if (a.kv_valid_len != nullptr) {
    for (int64_t b = 0; b < a.batch; ++b) {
      const int64_t n = a.kv_valid_len[b];
      if (n < 0 || n > a.kv_len) {
        return absl::InvalidArgumentError(absl::StrCat("attention: kv_valid_len[", b, "] = ", n,
                                                       " is outside [0, kv_len = ", a.kv_len, "]"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace attune::attention
