#include "ops/contrib/attention_mask_index.h"
#include "ops/contrib/gqa_positions.h"
#include "ops/contrib/rotary_embedding.h"
#include "ops/registry.h"

namespace attune {

void RegisterContribKernels(KernelRegistry& registry) {
  registry.Register("", "RotaryEmbedding", 23, MakeOnnxRotaryEmbeddingKernel);
  // ONNX Runtime's op: the same rotation with its inputs in another order.
  registry.Register("com.microsoft", "RotaryEmbedding", 1, MakeMsRotaryEmbeddingKernel);
  // GroupQueryAttention's positions and cache checks (engine/passes/contrib/gqa_lowering.cc).
  registry.Register("attune", "GroupQueryPositions", 1, MakeGroupQueryPositionsKernel);
  // Attention / MultiHeadAttention masks (engine/passes/contrib/ms_attention_lowering.cc).
  registry.Register("attune", "AttentionMaskIndex", 1, MakeAttentionMaskIndexKernel);
}

}  // namespace attune
