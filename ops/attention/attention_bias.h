// Turns an attention node's attn_mask input (bool: true = attend, or an
// additive float mask) into the additive float bias view the kernels take.
#pragma once

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "ops/attention/attention_params.h"
#include "ops/attention/attention_shapes.h"
#include "ops/attention/kernels/attention_args.h"
#include "ops/kernel.h"

namespace attune::attention {

struct AttentionBias {
  StridedView view;  // [batch][q_heads][q_len][total_kv_len], broadcast dims with stride 0
  Tensor storage;    // the materialised bias when the mask could not be read in place
};

/// The mask must have rank 1 to 4 and broadcast (numpy rules, aligned right)
/// to (batch, q_heads, q_len, total_kv_len). Its last dimension follows
/// `params.short_mask_keys`. A float32 mask with every key present is read in
/// place; a bool, 16-bit or short mask is materialised at its own broadcast
/// shape. InvalidArgument naming attn_mask otherwise.
absl::StatusOr<AttentionBias> PrepareAttentionBias(const KernelContext& ctx, const AttentionParams& params,
                                                   const AttentionShapes& s, const Tensor& mask);

}  // namespace attune::attention
