#include "ops/recurrent/kernels.h"
#include "ops/registry.h"

namespace attune {

void RegisterRecurrentKernels(KernelRegistry& registry) {
  registry.Register("", "RNN", 1, [](const KernelInfo& i) { return MakeRnnLayerKernel(i, RnnKind::kRnn); });
  registry.Register("", "GRU", 1, [](const KernelInfo& i) { return MakeRnnLayerKernel(i, RnnKind::kGru); });
  registry.Register("", "LSTM", 1, [](const KernelInfo& i) { return MakeRnnLayerKernel(i, RnnKind::kLstm); });
  registry.Register("", "LinearAttention", 27, MakeLinearAttentionKernel);
}

}  // namespace attune
