#include "ops/registry.h"
#include "ops/select/kernels.h"

namespace attune {

void RegisterSelectKernels(KernelRegistry& registry) {
  registry.Register("", "Hardmax", 1, MakeHardmaxKernel);    // 2-D view before 13, one axis from 13
  registry.Register("", "TopK", 1, MakeTopKKernel);          // K an input from 10, largest/sorted from 11
  registry.Register("", "EyeLike", 9, MakeEyeLikeKernel);
  registry.Register("", "OneHot", 9, MakeOneHotKernel);      // negative indices from 11
  registry.Register("", "Compress", 9, MakeCompressKernel);  // negative axis from 11
  registry.Register("", "NonZero", 9, MakeNonZeroKernel);
  registry.Register("", "GatherND", 11, MakeGatherNDKernel);  // batch_dims from 12
  registry.Register("", "Unique", 11, MakeUniqueKernel);
  registry.Register("", "NonMaxSuppression", 10, MakeNonMaxSuppressionKernel);  // center_point_box either way
}

}  // namespace attune
