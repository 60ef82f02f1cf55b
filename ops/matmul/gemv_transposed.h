// A few rows times a matrix stored transposed: c[m, n] = dot(a[m, :], b[n, :]).
// This is the decode-time lm_head of a tied embedding (M = 1, B = wte of
// 50257 x 768): every output is a dot product over one contiguous row of B,
// so B streams through once at memory bandwidth with no packing and no copy.
#pragma once

#include <cstdint>

#include "ops/matmul/gemv_weights.h"

namespace attune {

/// c[M, N] = a[M, K] · b[N, K]ᵀ, all dense row-major float32, split over N
/// across `threads` in static contiguous ranges (each thread reads its own
/// rows of B once for all M rows of A). Kernels use it up to kGemvMaxRowsOfA
/// rows (gemv_weights.h), where it beats a general GEMM.
void GemvTransposed(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int threads);

namespace gemv_transposed_detail {

/// Outputs c[:, begin:end) (rows begin..end of B). Each output is one thread's
/// dot product in a fixed order, so results do not depend on the thread count.
using RowRangeFn = void (*)(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n,
                            int64_t begin, int64_t end);
void RowRangeGeneric(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t begin,
                     int64_t end);
/// Four streams in distant parts of the range (AVX2 machines).
void RowRangeAvx2(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t begin,
                  int64_t end);
/// More rows of A than four (m > kGemvStreamBoundRows only) on AVX-512 machines: zmm tiles of 4 rows of A by
/// 4 rows of B, each output with the bits the ymm variants give it.
void RowRangeAvx512ManyRows(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n,
                            int64_t begin, int64_t end);
/// Adjacent rows, one stream (AVX-512 machines).
void RowRangeAvx2Adjacent(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t begin,
                          int64_t end);

}  // namespace gemv_transposed_detail

}  // namespace attune
