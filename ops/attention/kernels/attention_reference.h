// The reference attention: per query row, scores in double, a two-pass
// softmax, no tiling. Slow and obviously right; every fast path is tested
// against it.
#pragma once

#include "ops/attention/kernels/attention_args.h"

namespace attune::attention {

/// Assumes ValidateAttentionArgs(args) passed.
void RunAttentionReference(const AttentionArgs& args);

}  // namespace attune::attention
