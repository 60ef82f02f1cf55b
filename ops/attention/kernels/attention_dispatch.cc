#include "ops/attention/kernels/attention_args.h"
#include "ops/attention/kernels/attention_reference.h"

namespace attune::attention {

absl::Status RunAttention(const AttentionArgs& args, AttentionBackend backend) {
  absl::Status valid = ValidateAttentionArgs(args);
  if (!valid.ok()) return valid;
  // Every backend currently runs the reference; the fast paths replace it.
  RunAttentionReference(args);
  return absl::OkStatus();
}

}  // namespace attune::attention
