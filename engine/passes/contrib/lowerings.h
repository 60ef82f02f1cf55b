// The lowerings of ONNX Runtime's vendor ops (com.microsoft, and the ones it
// registers in the default domain) onto standard ops and Attune's fused ops,
// one function per op family; the pass (contrib_lowering.cc) picks by op type.
#pragma once

#include "absl/status/status.h"
#include "engine/passes/contrib/lowering_kit.h"

namespace attune::contrib {

// Norms (norm_lowering.cc).
absl::Status LowerSkipLayerNorm(Lowering& l, PassContext& context, bool simplified);
absl::Status LowerSimplifiedLayerNorm(Lowering& l, PassContext& context);
absl::Status LowerLayerNorm(Lowering& l, PassContext& context);
absl::Status LowerEmbedLayerNorm(Lowering& l, PassContext& context);

// Activations and element-wise (activation_lowering.cc).
absl::Status LowerGelu(Lowering& l, PassContext& context);
absl::Status LowerFastGelu(Lowering& l, PassContext& context);
absl::Status LowerBiasGelu(Lowering& l, PassContext& context);
absl::Status LowerQuickGelu(Lowering& l, PassContext& context);
absl::Status LowerBiasAdd(Lowering& l, PassContext& context);

// Attention (gqa_lowering.cc, attention_lowering.cc, mha_lowering.cc).
absl::Status LowerGroupQueryAttention(Lowering& l, PassContext& context);
absl::Status LowerMsAttention(Lowering& l, PassContext& context);
absl::Status LowerMsMultiHeadAttention(Lowering& l, PassContext& context);

// Products (matmul_lowering.cc).
absl::Status LowerFusedMatMul(Lowering& l, PassContext& context);

}  // namespace attune::contrib
