// Many rows times a constant row-major weight matrix used where it is, on
// machines whose best SIMD is AVX2. There oneDNN 2.6's AVX2 GEMM runs these
// products (M of a prompt, K × N of a transformer's projections) well below
// the FMA peak (bench/matmul_bench BM_ConstantWeightsLayout on Zen 3: 31–52
// of 95 GFLOP/s per core at M = 128, K = 768), so they are computed here:
// a 6 × 16 register tile, the weights copied 4 strips of 16 columns and 768
// rows at a time into contiguous scratch that stays in L2 while every row of
// A passes over it. Threads take disjoint ranges of 16-column strips; the sum over K
// runs in order, so results do not depend on the thread count.
#pragma once

#include <cstdint>

#include "absl/status/status.h"

namespace attune {

/// Whether GemmRowsInPlace runs here (the active ISA is AVX2: AVX-512 machines
/// keep oneDNN, whose AVX-512 kernels run near their peak).
bool GemmRowsInPlaceAvailable();

/// c[M, N] = a[M, K] · W (+ bias[N]) for a dense row-major W of K × N; a and
/// c dense row-major. Only where GemmRowsInPlaceAvailable(). Fails only when
/// its scratch (kStripScratchFloats per thread) cannot be allocated.
absl::Status GemmRowsInPlace(const float* weights, int64_t k, int64_t n, const float* a, int64_t m,
                             const float* bias, float* c, int threads);

namespace gemm_rows_detail {

/// Rows and columns of the register tile, rows of a weight strip.
inline constexpr int64_t kTileRows = 6;
inline constexpr int64_t kTileCols = 16;
inline constexpr int64_t kStripRows = 768;
/// Strips copied together (a weight row's 256 contiguous bytes).
inline constexpr int64_t kPackedStrips = 4;
/// Floats of scratch one range of strips needs (192 KiB: off the stack).
inline constexpr int64_t kStripScratchFloats = kPackedStrips * kStripRows * kTileCols;

struct Problem {
  const float* weights;
  int64_t k, n;
  const float* a;
  int64_t m;
  const float* bias;  // may be null
  float* c;
};

/// Computes output columns [first_strip · 16, last_strip · 16) ∩ [0, N);
/// `scratch` holds kStripScratchFloats, 32-byte aligned.
void StripRangeAvx2(const Problem& p, int64_t first_strip, int64_t last_strip, float* scratch);

}  // namespace gemm_rows_detail
}  // namespace attune
