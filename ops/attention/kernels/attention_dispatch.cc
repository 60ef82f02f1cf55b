// RunAttention: validation, then the backend. The kAuto rule, from the
// measurements in README.md ("Dispatch"):
//   - q_len <= 4 (decode): flash decode path (KV split across threads).
//   - no causal/window mask, no bias, no softcap, kv_len <= 256: oneDNN
//     primitives (batched matmul + softmax + matmul). At these sizes the
//     flash kernel's per-block fixed costs (Qᵀ transposition, accumulator
//     set-up, output transposition) are not amortised: oneDNN took 0.82x
//     (T=64), 0.82x (T=128), 0.91x (T=256) of flash's time, B=1, H=12, D=64,
//     1 thread; at T=512 flash is faster.
//   - everything else: flash (2-3x faster than oneDNN for causal T >= 512,
//     equal at causal T=128).
// kSimd forces flash, kOneDnn the oneDNN path (falling back to flash for
// shapes it rejects), kReference the reference.
#include "ops/attention/kernels/attention_args.h"
#include "ops/attention/kernels/attention_onednn.h"
#include "ops/attention/kernels/attention_reference.h"
#include "ops/attention/kernels/flash_attention.h"

namespace attune::attention {
namespace {

constexpr int64_t kOneDnnMaxKvLen = 256;

bool PreferOneDnn(const AttentionArgs& a) {
  return !a.causal && a.window == 0 && a.bias.data == nullptr && a.softcap == 0.0f && a.kv_len <= kOneDnnMaxKvLen &&
         a.q_len > kFlashDecodeMaxQueryLen && OneDnnSupports(a);
}

absl::Status RunFlashOrReference(const AttentionArgs& args) {
  if (FlashSupports(args)) return RunFlashAttention(args, FlashGemm::kNative);
  RunAttentionReference(args);
  return absl::OkStatus();
}

absl::Status RunOneDnnOrFlash(const AttentionArgs& args) {
  if (OneDnnSupports(args)) {
    absl::Status status = RunAttentionOneDnn(args);
    if (status.code() != absl::StatusCode::kUnimplemented) return status;
  }
  return RunFlashOrReference(args);
}

}  // namespace

absl::Status RunAttention(const AttentionArgs& args, AttentionBackend backend) {
  absl::Status valid = ValidateAttentionArgs(args);
  if (!valid.ok()) return valid;
  switch (backend) {
    case AttentionBackend::kReference:
      RunAttentionReference(args);
      return absl::OkStatus();
    case AttentionBackend::kOneDnn:
      return RunOneDnnOrFlash(args);
    case AttentionBackend::kSimd:
      return RunFlashOrReference(args);
    case AttentionBackend::kAuto:
      return PreferOneDnn(args) ? RunOneDnnOrFlash(args) : RunFlashOrReference(args);
  }
  return absl::InternalError("attention: unknown backend");
}

}  // namespace attune::attention
