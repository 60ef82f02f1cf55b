// The transposed GEMV for more rows of A than four, with zmm FMAs (Zen 5
// runs them at full width: twice the ymm rate; Zen 4 at the ymm rate with
// half the instructions). A zmm accumulator over a 16-float step of K holds
// in its halves exactly the even and odd ymm accumulators of the ymm variant,
// and FinishDot reduces them alike, so every output has the bits one row
// alone gets. Tiles of 4 rows of A × 4 rows of B: 16 independent chains,
// B's four rows (12 KB at K = 768) stay in L1 while every row of A passes.
// GCC 12 warns about _mm256_undefined_ps() inside its own intrinsics headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include "ops/matmul/gemv_transposed.h"
#include "ops/matmul/gemv_transposed_dot.h"

namespace attune::gemv_transposed_detail {
namespace {

constexpr int kTileA = 4;
constexpr int kTileB = 4;

// The first tile of rows of A over B's rows prefetches the next NB rows of B
// (the same offset), so that B keeps streaming while the tiles compute.
template <int MA, int NB, bool kFetchNext>
void DotTile(const float* a, const float* b, float* c, int64_t k, int64_t n) {
  __m512 acc[MA][NB];
  for (int r = 0; r < MA; ++r)
    for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    __m512 bv[NB];
    for (int j = 0; j < NB; ++j) bv[j] = _mm512_loadu_ps(b + j * k + i);
    if constexpr (kFetchNext)
      for (int j = 0; j < NB; ++j) _mm_prefetch(reinterpret_cast<const char*>(b + (NB + j) * k + i), _MM_HINT_T0);
    for (int r = 0; r < MA; ++r) {
      const __m512 x = _mm512_loadu_ps(a + r * k + i);
      for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_fmadd_ps(x, bv[j], acc[r][j]);
    }
  }
  for (int r = 0; r < MA; ++r)
    for (int j = 0; j < NB; ++j)
      c[r * n + j] = FinishDot(_mm512_castps512_ps256(acc[r][j]), _mm512_extractf32x8_ps(acc[r][j], 1), a + r * k,
                               b + j * k, i, k);
}

// Rows of A in tiles of kTileA (the last smaller) against NB rows of B at col.
template <int NB>
void AllRows(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t col) {
  // m > 4: a first tile of kTileA rows always exists and fetches ahead.
  DotTile<kTileA, NB, true>(a, b + col * k, c + col, k, n);
  int64_t r = kTileA;
  for (; r + kTileA <= m; r += kTileA) DotTile<kTileA, NB, false>(a + r * k, b + col * k, c + r * n + col, k, n);
  switch (m - r) {
    case 3: DotTile<3, NB, false>(a + r * k, b + col * k, c + r * n + col, k, n); break;
    case 2: DotTile<2, NB, false>(a + r * k, b + col * k, c + r * n + col, k, n); break;
    case 1: DotTile<1, NB, false>(a + r * k, b + col * k, c + r * n + col, k, n); break;
    default: break;
  }
}

}  // namespace

void RowRangeAvx512ManyRows(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t begin,
                            int64_t end) {
  int64_t col = begin;
  for (; col + kTileB <= end; col += kTileB) AllRows<kTileB>(a, b, c, m, k, n, col);
  for (; col < end; ++col) AllRows<1>(a, b, c, m, k, n, col);
}

}  // namespace attune::gemv_transposed_detail
