#include "ops/matmul/gemv_transposed.h"

#include "ops/common/cpu_features.h"
#include "ops/common/parallel.h"

namespace attune {
namespace gemv_transposed_detail {
namespace {

// Independent partial sums, so the compiler vectorises the inner loop without
// reassociating a single sum (the result does not depend on the thread count).
constexpr int kLanes = 16;

float Dot(const float* x, const float* y, int64_t k) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= k; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] += x[i + j] * y[i + j];
  float sum = 0.0f;
  for (int j = 0; j < kLanes; ++j) sum += acc[j];
  for (; i < k; ++i) sum += x[i] * y[i];
  return sum;
}

}  // namespace

void RowRangeGeneric(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t begin,
                     int64_t end) {
  for (int64_t col = begin; col < end; ++col) {
    const float* row = b + col * k;
    for (int64_t r = 0; r < m; ++r) c[r * n + col] = Dot(a + r * k, row, k);
  }
}

}  // namespace gemv_transposed_detail

namespace {
// Outputs of B rows per thread below which one thread does it all (a B row of
// 768 floats is 3 KB; 256 rows keep a chunk above the team start-up cost).
constexpr int64_t kRowsGrain = 256;
}  // namespace

void GemvTransposed(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int threads) {
  using namespace gemv_transposed_detail;
  // AVX-512 machines take the ymm variant too: streaming loads of 512 bits
  // were slower on Zen 4 (gemv_weights.cc). Their prefetchers read adjacent
  // rows faster than several streams (gemv_transposed_avx2.cc).
  const Isa isa = ActiveIsa();
  // More rows than four are bound by the FMAs, not by B's stream: zmm tiles.
  const RowRangeFn run = isa == Isa::kAvx512 ? (m > kGemvStreamBoundRows ? RowRangeAvx512ManyRows : RowRangeAvx2Adjacent)
                         : isa == Isa::kAvx2 ? RowRangeAvx2
                                             : RowRangeGeneric;
  ParallelForRange(n, kRowsGrain, threads, [&](int64_t begin, int64_t end) { run(a, b, c, m, k, n, begin, end); });
}

}  // namespace attune
