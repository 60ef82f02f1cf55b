#include "ops/matmul/gemm_rows.h"

#include "ops/common/cpu_features.h"
#include "ops/common/parallel_scratch.h"

namespace attune {

bool GemmRowsInPlaceAvailable() { return ActiveIsa() == Isa::kAvx2; }

absl::Status GemmRowsInPlace(const float* weights, int64_t k, int64_t n, const float* a, int64_t m,
                             const float* bias, float* c, int threads) {
  using namespace gemm_rows_detail;
  if (k == 0) {  // an empty sum: the bias, or zeros
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] = bias != nullptr ? bias[j] : 0.0f;
    return absl::OkStatus();
  }
  const Problem p{weights, k, n, a, m, bias, c};
  const int64_t strips = (n + kTileCols - 1) / kTileCols;
  // Strips per thread below which one thread does it all: a strip is M · K
  // multiply-adds per column (1.6 M at M = 128, K = 768).
  constexpr int64_t kStripsGrain = 4;
  return ParallelForRangeWithScratch(
      strips, kStripsGrain, threads, sizeof(float) * kStripScratchFloats, "matmul: the row GEMM's weight strips",
      [&](int64_t first, int64_t last, void* scratch) {
        StripRangeAvx2(p, first, last, static_cast<float*>(scratch));
      });
}

}  // namespace attune
