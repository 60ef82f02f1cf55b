// The residual Add and the norm that reads it, as one op that forms the sum,
// stores it for the residual stream, and normalises it in one pass over the
// row:
//   LayerNormalization(x + skip, scale, bias) -> attune.SkipLayerNormalization
//   RMSNormalization(x + skip, scale)         -> attune.SkipRMSNormalization
// (GPT-2's ln_2 after the attention's residual and ln_1 after the MLP's, the
// embeddings' wte + wpe before the first ln_1; LLaMA's post_attention_layernorm
// and input_layernorm after rms_norm_fusion). Output 1 is the sum, which
// takes the Add's place wherever else it is read. x must have the sum's
// shape, and skip that shape or that shape with leading dims of 1, repeated
// over x's rows (GPT-2's position embedding [1, seq, d] over the batch); a
// bias Add, which broadcasts within the normalized dims, stays. The sum is
// rounded as the Add op rounds it, so the fused op gives the subgraph's bits.
#pragma once

#include "engine/passes/op_fusion/op_rule.h"

namespace attune::op_fusion {

/// "skip_layer_norm" and "skip_rms_norm", anchored at the norm.
std::vector<OpRule> SkipNormRules();

}  // namespace attune::op_fusion
