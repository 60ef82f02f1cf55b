#include "ops/matmul/gemm_rows.h"

#include "ops/common/cpu_features.h"
#include "ops/common/parallel.h"

namespace attune {

bool GemmRowsInPlaceAvailable() { return ActiveIsa() == Isa::kAvx2; }

void GemmRowsInPlace(const float* weights, int64_t k, int64_t n, const float* a, int64_t m, const float* bias,
                     float* c, int threads) {
  using namespace gemm_rows_detail;
  const Problem p{weights, k, n, a, m, bias, c};
  const int64_t strips = (n + kTileCols - 1) / kTileCols;
  // Strips per thread below which one thread does it all: a strip is M · K
  // multiply-adds per column (1.6 M at M = 128, K = 768).
  constexpr int64_t kStripsGrain = 4;
  ParallelForRange(strips, kStripsGrain, threads,
                   [&](int64_t first, int64_t last) { StripRangeAvx2(p, first, last); });
}

}  // namespace attune
