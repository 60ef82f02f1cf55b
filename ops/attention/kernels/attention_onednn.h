// Attention through oneDNN 2.6 primitives: batched matmul Q·Kᵀ (scale as
// output scale, bias and structural masks as one binary-add post-op),
// softmax, batched matmul P·V. Materialises the B·H·Tq·Tk scores: the
// baseline the flash kernels are measured against, and the path for shapes
// the dispatcher finds it faster on (see README.md).
#pragma once

#include "absl/status/status.h"
#include "ops/attention/kernels/attention_args.h"

namespace attune::attention {

/// Whether the oneDNN path takes these args (non-negative strides, sizes
/// that fit; the scores buffer within the byte limit).
bool OneDnnSupports(const AttentionArgs& args);

/// Assumes ValidateAttentionArgs(args) passed. Unimplemented when oneDNN
/// rejects the shapes; ResourceExhausted when the scores do not fit.
absl::Status RunAttentionOneDnn(const AttentionArgs& args);

}  // namespace attune::attention
