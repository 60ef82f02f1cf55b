#include "ops/reduce/softmax_row.h"

#include <cstdlib>
#include <string>

namespace attune::reduce {

void SoftmaxRowPortable(const float* x, float* y, int64_t n, bool log);
void SoftmaxRowAvx2(const float* x, float* y, int64_t n, bool log);
void SoftmaxRowAvx512(const float* x, float* y, int64_t n, bool log);

const std::vector<SoftmaxRowKernel>& AvailableSoftmaxRowKernels() {
  static const std::vector<SoftmaxRowKernel> kernels = [] {
    std::vector<SoftmaxRowKernel> k = {{"portable", SoftmaxRowPortable}};
    // libgcc's checks include the OS's XSAVE support for the wider registers.
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) k.push_back({"avx2", SoftmaxRowAvx2});
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
      k.push_back({"avx512", SoftmaxRowAvx512});
    return k;
  }();
  return kernels;
}

SoftmaxRowFn SelectedSoftmaxRow() {
  static const SoftmaxRowFn selected = [] {
    const auto& kernels = AvailableSoftmaxRowKernels();
    if (const char* forced = std::getenv("ATTUNE_ISA"))
      for (const SoftmaxRowKernel& k : kernels)
        if (std::string(forced) == k.isa) return k.fn;
    return kernels.back().fn;
  }();
  return selected;
}

}  // namespace attune::reduce
