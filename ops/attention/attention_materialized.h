// Attention computed one full score row at a time, in ONNX Attention's order:
// scale·Q·Kᵀ → softcap → + bias, causal, window and padding masks → softmax → ·V.
// Serves the cases the fused kernels do not cover: the qk_matmul_output
// output of ONNX Attention, and a softcap together with an additive bias.
#pragma once

#include "absl/status/status.h"
#include "ops/attention/attention_params.h"
#include "ops/attention/kernels/attention_args.h"

namespace attune::attention {

/// Same arguments and masking rules as RunAttention (see attention_args.h),
/// except that the softcap is applied before the bias is added. When `qk` is
/// not null it receives the scores at stage `qk_mode`, contiguous
/// [batch][q_heads][q_len][kv_len]. Rows that see no key follow
/// args.masked_rows (in Y and in the softmax stage).
absl::Status RunMaterializedAttention(const AttentionArgs& args, float* qk, QkOutputMode qk_mode);

}  // namespace attune::attention
