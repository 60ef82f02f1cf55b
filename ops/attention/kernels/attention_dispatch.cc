// RunAttention: validation, then the backend. The kAuto rule, from the
// measurements in README.md ("Dispatch"; B,T,H·D inputs, D=64, 1 thread):
//   - q_len <= 4 (decode): flash decode path (KV split across threads);
//     oneDNN took 1.1-1.7x its time at q=1 (kv 512-8192, MHA, GQA 32/8,
//     batch 4) and tied at q=4.
//   - no causal/window mask, no bias, no softcap, kv_len <= 64: oneDNN
//     primitives (batched matmul + softmax + matmul). There the flash
//     kernel's per-block fixed costs (Qᵀ and output transpositions,
//     accumulator set-up) are not amortised: oneDNN took 0.87-0.99x of
//     flash's time at T=64 and 0.89-0.91x at T=32 (B=1 and 8, H=12); at
//     T=128 they tie and from T=256 flash is faster (0.88x at 256, 0.88x at 512).
//   - everything else: flash (causal: 2.8x faster than oneDNN at T=512, 3.2x
//     at 1024, > 20x at 2048 where oneDNN materialises 200 MB of scores).
// kSimd forces flash, kOneDnn the oneDNN path (falling back to flash for
// shapes it rejects), kReference the reference.
#include "ops/attention/kernels/attention_args.h"
#include "ops/attention/kernels/attention_onednn.h"
#include "ops/attention/kernels/attention_reference.h"
#include "ops/attention/kernels/flash_attention.h"

namespace attune::attention {
namespace {

constexpr int64_t kOneDnnMaxKvLen = 64;

bool PreferOneDnn(const AttentionArgs& a) {
  return !a.causal && a.window == 0 && a.bias.data == nullptr && a.softcap == 0.0f && a.kv_len <= kOneDnnMaxKvLen &&
         a.q_len > kFlashDecodeMaxQueryLen && OneDnnSupports(a);
}

absl::Status RunFlashOrReference(const AttentionArgs& args) {
  if (FlashSupports(args)) return RunFlashAttention(args);
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
