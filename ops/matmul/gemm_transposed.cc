#include "ops/matmul/gemm_transposed.h"

#include <algorithm>

#include "ops/common/cpu_features.h"
#include "ops/common/parallel_scratch.h"

namespace attune {

bool GemmTransposedAvailable() { return ActiveIsa() == Isa::kAvx512; }

absl::Status GemmTransposed(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int threads) {
  using namespace gemm_transposed_detail;
  if (m <= 0 || n <= 0) return absl::OkStatus();
  if (k == 0) {  // an empty sum
    std::fill(c, c + m * n, 0.0f);
    return absl::OkStatus();
  }
  const Problem p{a, b, c, m, k, n};
  const int64_t panels = (n + kPanelCols - 1) / kPanelCols;
  // Panels per thread below which one thread does it all: a panel is
  // M · K · 64 multiply-adds (6.3 M at M = 128, K = 768).
  const int64_t grain = m * k >= int64_t{1} << 14 ? 1 : panels;
  return ParallelForRangeWithScratch(
      panels, grain, threads, sizeof(float) * kPanelScratchFloats, "matmul: the transposed GEMM's panel",
      [&](int64_t first, int64_t last, void* scratch) {
        PanelRangeAvx512(p, first, last, static_cast<float*>(scratch));
      });
}

}  // namespace attune
