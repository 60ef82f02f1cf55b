#include "ops/attention/kernels/attention_args.h"
#include "ops/attention/kernels/attention_reference.h"
#include "ops/attention/kernels/flash_attention.h"

namespace attune::attention {

absl::Status RunAttention(const AttentionArgs& args, AttentionBackend backend) {
  absl::Status valid = ValidateAttentionArgs(args);
  if (!valid.ok()) return valid;
  switch (backend) {
    case AttentionBackend::kReference:
      RunAttentionReference(args);
      return absl::OkStatus();
    case AttentionBackend::kAuto:
    case AttentionBackend::kSimd:
    case AttentionBackend::kOneDnn:
      if (FlashSupports(args)) return RunFlashAttention(args, FlashGemm::kNative);
      RunAttentionReference(args);
      return absl::OkStatus();
  }
  return absl::InternalError("attention: unknown backend");
}

}  // namespace attune::attention
