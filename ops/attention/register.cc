#include "core/schema/multi_head_attention.h"
#include "ops/attention/attention_kernel.h"
#include "ops/registry.h"

namespace attune {

void RegisterAttentionKernels(KernelRegistry& registry) {
  registry.Register(mha::kDomain, mha::kOpType, 1, attention::CreateMultiHeadAttentionKernel);
  // Opset 24 adds input 6, nonpad_kv_seqlen; the parser reads the opset.
  registry.Register("", "Attention", 23, 23, attention::CreateOnnxAttentionKernel);
  registry.Register("", "Attention", 24, attention::CreateOnnxAttentionKernel);
}

}  // namespace attune
