#include "ops/reduce/softmax_row.h"

#include "ops/common/cpu_features.h"

namespace attune::reduce {

void SoftmaxRowPortable(const float* x, float* y, int64_t n, bool log);
void SoftmaxRowAvx2(const float* x, float* y, int64_t n, bool log);
void SoftmaxRowAvx512(const float* x, float* y, int64_t n, bool log);

const std::vector<SoftmaxRowKernel>& AvailableSoftmaxRowKernels() {
  static const std::vector<SoftmaxRowKernel> kernels = [] {
    std::vector<SoftmaxRowKernel> k = {{IsaName(Isa::kGeneric), SoftmaxRowPortable}};
    if (IsaSupported(Isa::kAvx2)) k.push_back({IsaName(Isa::kAvx2), SoftmaxRowAvx2});
    if (IsaSupported(Isa::kAvx512)) k.push_back({IsaName(Isa::kAvx512), SoftmaxRowAvx512});
    return k;
  }();
  return kernels;
}

SoftmaxRowFn SelectedSoftmaxRow() {
  switch (ActiveIsa()) {
    case Isa::kAvx512: return SoftmaxRowAvx512;
    case Isa::kAvx2: return SoftmaxRowAvx2;
    case Isa::kGeneric: break;
  }
  return SoftmaxRowPortable;
}

}  // namespace attune::reduce
