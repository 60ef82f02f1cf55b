// The AVX2 tile of GemmRowsInPlace (gemm_rows.h).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ops/matmul/gemm_rows.h"

namespace attune::gemm_rows_detail {
namespace {

// out[r][0, 16) (+)= rows[r][0, kc) · strip[kc, 16] for r < 6; `init` starts
// from `bias` (16 floats, or zeros) instead of out. The twelve sums are
// named, not an array, so that they stay in registers.
void Tile(const float* const rows[kTileRows], const float* strip, int64_t kc, float* const out[kTileRows], bool init,
          const float* bias) {
  __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  if (init) {
    const __m256 b0 = bias != nullptr ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
    const __m256 b1 = bias != nullptr ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();
    c00 = c10 = c20 = c30 = c40 = c50 = b0;
    c01 = c11 = c21 = c31 = c41 = c51 = b1;
  } else {
    c00 = _mm256_loadu_ps(out[0]), c01 = _mm256_loadu_ps(out[0] + 8);
    c10 = _mm256_loadu_ps(out[1]), c11 = _mm256_loadu_ps(out[1] + 8);
    c20 = _mm256_loadu_ps(out[2]), c21 = _mm256_loadu_ps(out[2] + 8);
    c30 = _mm256_loadu_ps(out[3]), c31 = _mm256_loadu_ps(out[3] + 8);
    c40 = _mm256_loadu_ps(out[4]), c41 = _mm256_loadu_ps(out[4] + 8);
    c50 = _mm256_loadu_ps(out[5]), c51 = _mm256_loadu_ps(out[5] + 8);
  }
  const float *a0 = rows[0], *a1 = rows[1], *a2 = rows[2], *a3 = rows[3], *a4 = rows[4], *a5 = rows[5];
  for (int64_t k = 0; k < kc; ++k) {
    const __m256 w0 = _mm256_load_ps(strip + k * kTileCols);
    const __m256 w1 = _mm256_load_ps(strip + k * kTileCols + 8);
    __m256 x = _mm256_broadcast_ss(a0 + k);
    c00 = _mm256_fmadd_ps(x, w0, c00), c01 = _mm256_fmadd_ps(x, w1, c01);
    x = _mm256_broadcast_ss(a1 + k);
    c10 = _mm256_fmadd_ps(x, w0, c10), c11 = _mm256_fmadd_ps(x, w1, c11);
    x = _mm256_broadcast_ss(a2 + k);
    c20 = _mm256_fmadd_ps(x, w0, c20), c21 = _mm256_fmadd_ps(x, w1, c21);
    x = _mm256_broadcast_ss(a3 + k);
    c30 = _mm256_fmadd_ps(x, w0, c30), c31 = _mm256_fmadd_ps(x, w1, c31);
    x = _mm256_broadcast_ss(a4 + k);
    c40 = _mm256_fmadd_ps(x, w0, c40), c41 = _mm256_fmadd_ps(x, w1, c41);
    x = _mm256_broadcast_ss(a5 + k);
    c50 = _mm256_fmadd_ps(x, w0, c50), c51 = _mm256_fmadd_ps(x, w1, c51);
  }
  _mm256_storeu_ps(out[0], c00), _mm256_storeu_ps(out[0] + 8, c01);
  _mm256_storeu_ps(out[1], c10), _mm256_storeu_ps(out[1] + 8, c11);
  _mm256_storeu_ps(out[2], c20), _mm256_storeu_ps(out[2] + 8, c21);
  _mm256_storeu_ps(out[3], c30), _mm256_storeu_ps(out[3] + 8, c31);
  _mm256_storeu_ps(out[4], c40), _mm256_storeu_ps(out[4] + 8, c41);
  _mm256_storeu_ps(out[5], c50), _mm256_storeu_ps(out[5] + 8, c51);
}

// Copies rows [k0, k0 + kc) of strips [s0, s0 + count) into `strips`, strip
// after strip, each kc × 16 and contiguous (columns past N zero): weight rows
// N floats apart would share L1 sets when N · 4 bytes is a multiple of 4 KiB,
// and a row's strips are read together, 64 contiguous bytes each.
void PackStrips(const Problem& p, int64_t k0, int64_t kc, int64_t s0, int64_t count, float* strips) {
  const int64_t n0 = s0 * kTileCols;
  const int64_t width = std::min(count * kTileCols, p.n - n0);
  const int64_t whole = width / kTileCols;
  for (int64_t k = 0; k < kc; ++k) {
    const float* row = p.weights + (k0 + k) * p.n + n0;
    if (k + 8 < kc) _mm_prefetch(reinterpret_cast<const char*>(row + 8 * p.n), _MM_HINT_T0);
    for (int64_t j = 0; j < whole; ++j) {
      float* out = strips + j * kc * kTileCols + k * kTileCols;
      _mm256_store_ps(out, _mm256_loadu_ps(row + j * kTileCols));
      _mm256_store_ps(out + 8, _mm256_loadu_ps(row + j * kTileCols + 8));
    }
    if (whole < count) {
      float* out = strips + whole * kc * kTileCols + k * kTileCols;
      const int64_t rest = width - whole * kTileCols;
      std::memcpy(out, row + whole * kTileCols, rest * sizeof(float));
      std::fill(out + rest, out + kTileCols, 0.0f);
    }
  }
}

}  // namespace

void StripRangeAvx2(const Problem& p, int64_t first_strip, int64_t last_strip, float* strips) {
  // A tile narrower than 16 columns or shorter than 6 rows is computed here
  // and its part copied out; rows past M read zeros.
  alignas(32) float edge[kTileRows * kTileCols];
  alignas(32) float edge_bias[kTileCols];
  alignas(32) static const float kZeros[kStripRows] = {};
  for (int64_t k0 = 0; k0 < p.k; k0 += kStripRows) {
    const int64_t kc = std::min(kStripRows, p.k - k0);
    const bool init = k0 == 0;
    for (int64_t s0 = first_strip; s0 < last_strip; s0 += kPackedStrips) {
      const int64_t count = std::min(kPackedStrips, last_strip - s0);
      PackStrips(p, k0, kc, s0, count, strips);
      for (int64_t j = 0; j < count; ++j) {
        const float* strip = strips + j * kc * kTileCols;
        const int64_t n0 = (s0 + j) * kTileCols;
        const int64_t cols = std::min(kTileCols, p.n - n0);
        const float* bias = p.bias != nullptr ? p.bias + n0 : nullptr;
        if (cols < kTileCols && bias != nullptr) {
          std::memcpy(edge_bias, bias, cols * sizeof(float));
          std::fill(edge_bias + cols, edge_bias + kTileCols, 0.0f);
          bias = edge_bias;
        }
        for (int64_t i = 0; i < p.m; i += kTileRows) {
          const int64_t rows = std::min(kTileRows, p.m - i);
          const float* a[kTileRows];
          float* c[kTileRows];
          const bool whole = rows == kTileRows && cols == kTileCols;
          for (int64_t r = 0; r < kTileRows; ++r) {
            a[r] = r < rows ? p.a + (i + r) * p.k + k0 : kZeros;
            c[r] = whole ? p.c + (i + r) * p.n + n0 : edge + r * kTileCols;
          }
          if (whole) {
            Tile(a, strip, kc, c, init, bias);
            continue;
          }
          if (!init)
            for (int64_t r = 0; r < rows; ++r) std::memcpy(c[r], p.c + (i + r) * p.n + n0, cols * sizeof(float));
          Tile(a, strip, kc, c, init, bias);
          for (int64_t r = 0; r < rows; ++r) std::memcpy(p.c + (i + r) * p.n + n0, c[r], cols * sizeof(float));
        }
      }
    }
  }
}

}  // namespace attune::gemm_rows_detail
