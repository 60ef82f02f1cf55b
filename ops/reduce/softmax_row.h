// The float32 softmax row kernel, compiled once per ISA and picked once at start-up.
#pragma once

#include <cstdint>
#include <vector>

namespace attune::reduce {

/// y = softmax(x) (or log-softmax) over one contiguous row of n floats; x and y must not overlap.
using SoftmaxRowFn = void (*)(const float* x, float* y, int64_t n, bool log);

struct SoftmaxRowKernel {
  const char* isa;  // "portable", "avx2", "avx512"
  SoftmaxRowFn fn;
};

/// Every variant this CPU can run, portable first.
const std::vector<SoftmaxRowKernel>& AvailableSoftmaxRowKernels();
/// The best of them, or the one named by ATTUNE_ISA (portable|avx2|avx512) when it is available.
SoftmaxRowFn SelectedSoftmaxRow();

}  // namespace attune::reduce
