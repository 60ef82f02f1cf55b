#include "ops/attention/kernels/attention_args.h"
#include "ops/attention/kernels/attention_onednn.h"
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
    case AttentionBackend::kOneDnn:
      if (OneDnnSupports(args)) {
        absl::Status status = RunAttentionOneDnn(args);
        if (status.code() != absl::StatusCode::kUnimplemented) return status;
      }
      [[fallthrough]];
    case AttentionBackend::kAuto:
    case AttentionBackend::kSimd:
      if (FlashSupports(args)) return RunFlashAttention(args, FlashGemm::kNative);
      RunAttentionReference(args);
      return absl::OkStatus();
  }
  return absl::InternalError("attention: unknown backend");
}

}  // namespace attune::attention
