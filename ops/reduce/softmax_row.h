// The float32 softmax row kernel, compiled once per ISA; the level comes from
// the shared dispatch (ops/common/cpu_features.h: CPUID, ATTUNE_ISA, SetForcedIsa).
#pragma once

#include <cstdint>
#include <vector>

namespace attune::reduce {

/// y = softmax(x) (or log-softmax) over one contiguous row of n floats; x and y must not overlap.
using SoftmaxRowFn = void (*)(const float* x, float* y, int64_t n, bool log);

struct SoftmaxRowKernel {
  const char* isa;  // IsaName: "generic", "avx2", "avx512"
  SoftmaxRowFn fn;
};

/// Every variant this CPU can run, portable first.
const std::vector<SoftmaxRowKernel>& AvailableSoftmaxRowKernels();
/// The kernel of ActiveIsa(): the best level, or the forced one (ATTUNE_ISA=generic|avx2|avx512).
SoftmaxRowFn SelectedSoftmaxRow();

}  // namespace attune::reduce
