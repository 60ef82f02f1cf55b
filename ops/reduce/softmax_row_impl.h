// Body of the float32 softmax row kernel. Included by one source file per ISA
// (softmax_row_portable.cc, _avx2.cc, _avx512.cc), each defining
// ATTUNE_SOFTMAX_ROW_NAME to the function's name; the compiler vectorises the
// loops for that file's flags.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ops/reduce/fast_exp.h"

#ifndef ATTUNE_SOFTMAX_ROW_NAME
#error "define ATTUNE_SOFTMAX_ROW_NAME before including softmax_row_impl.h"
#endif

namespace attune::reduce {

void ATTUNE_SOFTMAX_ROW_NAME(const float* x, float* y, int64_t n, bool log) {
  // 16 independent partial results per reduction so the loops vectorise without -ffast-math.
  constexpr int kLanes = 16;
  float part[kLanes];
  std::fill_n(part, kLanes, -std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] = std::max(part[l], x[i + l]);
  float m = -std::numeric_limits<float>::infinity();
  for (; i < n; ++i) m = std::max(m, x[i]);
  for (int l = 0; l < kLanes; ++l) m = std::max(m, part[l]);
  std::fill_n(part, kLanes, 0.0f);
  for (i = 0; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float e = FastExp(x[i + l] - m);
      y[i + l] = e;
      part[l] += e;
    }
  float sum = 0;
  for (; i < n; ++i) {
    y[i] = FastExp(x[i] - m);
    sum += y[i];
  }
  for (int l = 0; l < kLanes; ++l) sum += part[l];
  if (log) {
    // (x - m) - log(sum), not x - (m + log(sum)): m may be large enough to swamp the log.
    const float log_sum = std::log(sum);
    for (i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;
  } else {
    const float inv = 1.0f / sum;
    for (i = 0; i < n; ++i) y[i] *= inv;
  }
}

}  // namespace attune::reduce
