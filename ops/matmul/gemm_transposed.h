// Many rows times a matrix stored transposed: c[m, n] = dot(a[m, :], b[n, :]).
// This is the prompt's lm_head on a tied embedding (B = wte, 50 257 x 768,
// read as stored: the model holds it once, for the Gather and the head).
// Each thread transposes 64 rows of B at a time into a panel (depth x 64, in
// L2; 16 x 16 blocks transposed in registers) and multiplies every row of A
// by it with a 6 x 64 register tile, so each element of B is moved once and
// then serves all M rows; the next block of B is prefetched into L2 while the
// tiles run (3-4% of the head's time on one thread). On GPT-2's head at 128
// rows (Zen 4, in the whole model, interleaved runs) this took the same time
// as oneDNN 2.6 reading B through its strides on one thread (101-108 ms) and
// 50-71 ms against oneDNN's 75-81 ms on two.
//
// Each output is summed over K in order (depth blocks of at most kMaxDepth
// in turn), and threads take disjoint ranges of panels, so results do not
// depend on the thread count.
#pragma once

#include <cstdint>

#include "absl/status/status.h"

namespace attune {

/// Whether GemmTransposed runs here (the active ISA is AVX-512).
bool GemmTransposedAvailable();

/// Rows of A from which kernels take GemmTransposed (fewer take
/// GemvTransposed, gemv_transposed.h, or oneDNN): each element of B is
/// transposed once and must serve enough rows to pay for it.
inline constexpr int64_t kGemmTransposedMinRows = 16;

/// c[M, N] = a[M, K] · b[N, K]ᵀ, all dense row-major float32. Only where
/// GemmTransposedAvailable(). Fails only when a thread's panel scratch
/// cannot be allocated.
absl::Status GemmTransposed(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int threads);

namespace gemm_transposed_detail {

inline constexpr int64_t kTileRows = 6;
inline constexpr int64_t kPanelCols = 64;
/// Rows of K per panel: a panel of 1024 x 64 floats is 256 KiB.
inline constexpr int64_t kMaxDepth = 1024;
inline constexpr int64_t kPanelScratchFloats = kMaxDepth * kPanelCols;

struct Problem {
  const float* a;
  const float* b;
  float* c;
  int64_t m, k, n;
};

/// Computes output columns [first · 64, last · 64) ∩ [0, N); `panel` holds
/// kPanelScratchFloats, 64-byte aligned.
void PanelRangeAvx512(const Problem& p, int64_t first, int64_t last, float* panel);

}  // namespace gemm_transposed_detail
}  // namespace attune
