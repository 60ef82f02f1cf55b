#include "ops/matmul/gemv_weights.h"

#include <algorithm>

#include "ops/common/cpu_features.h"
#include "ops/common/parallel.h"

namespace attune {
namespace gemv_weights_detail {

void PanelRangeGeneric(const Problem& p, int64_t first, int64_t last) {
  const PanelLayout& w = *p.layout;
  float acc[kGemvMaxRowsOfA][kSimdPanelCols];
  for (int64_t panel = first; panel < last; ++panel) {
    const int64_t n0 = panel * w.panel_cols;
    const int64_t cols = std::min(w.panel_cols, w.n - n0);
    for (int64_t c0 = 0; c0 < cols; c0 += kSimdPanelCols) {
      const int64_t width = std::min(kSimdPanelCols, cols - c0);
      for (int64_t r = 0; r < p.m; ++r) std::fill(acc[r], acc[r] + width, 0.0f);
      for (int64_t k = 0; k < w.k; ++k) {
        const float* row = p.weights + panel * w.panel_stride + (k / w.block_rows) * w.block_stride +
                           (k % w.block_rows) * w.panel_cols + c0;
        for (int64_t r = 0; r < p.m; ++r) {
          const float x = p.a[r * w.k + k];
          for (int64_t j = 0; j < width; ++j) acc[r][j] += x * row[j];
        }
      }
      for (int64_t r = 0; r < p.m; ++r)
        for (int64_t j = 0; j < width; ++j)
          p.c[r * w.n + n0 + c0 + j] = acc[r][j] + (p.bias != nullptr ? p.bias[n0 + c0 + j] : 0.0f);
    }
  }
}

void ColumnRangeGeneric(const Problem& p, int64_t first, int64_t last) {
  const int64_t k = p.layout->k, n = p.layout->n;
  for (int64_t r = 0; r < p.m; ++r)
    for (int64_t j = first; j < last; ++j) p.c[r * n + j] = p.bias != nullptr ? p.bias[j] : 0.0f;
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* row = p.weights + kk * n;
    for (int64_t r = 0; r < p.m; ++r) {
      const float x = p.a[r * k + kk];
      float* out = p.c + r * n;
      for (int64_t j = first; j < last; ++j) out[j] += x * row[j];
    }
  }
}

namespace {

// AVX-512 machines run the ymm variants: streaming weights, 512-bit loads
// read slower than 256-bit ones on Zen 4 (bench/gemv_bench, GPT-2's 48 decode
// products: 12 GB/s with zmm against 19-20 GB/s with ymm in place, 12-16
// against 14-19 over the packed panels).
bool UseYmm() { return ActiveIsa() != Isa::kGeneric; }

PanelRangeFn ChoosePanelVariant(const PanelLayout& layout) {
  return layout.panel_cols == kSimdPanelCols && UseYmm() ? PanelRangeAvx2 : PanelRangeGeneric;
}

ColumnRangeFn ChooseColumnVariant() { return UseYmm() ? ColumnRangeAvx2 : ColumnRangeGeneric; }

}  // namespace
}  // namespace gemv_weights_detail

namespace {
// Panels per thread below which one thread does it all: a panel of 64
// columns is K · 256 bytes (192 KB at K = 768), several microseconds of reading.
constexpr int64_t kPanelsGrain = 2;
// Columns are split in whole cache lines, so no two threads write one line.
constexpr int64_t kLineFloats = 16;
// Weights per thread below which one thread does it all (256 KB).
constexpr int64_t kWeightsGrain = int64_t{1} << 16;
}  // namespace

void GemvPanels(const PanelLayout& layout, const float* weights, const float* a, int64_t m, const float* bias,
                float* c, int threads) {
  using namespace gemv_weights_detail;
  const Problem problem{&layout, weights, a, m, bias, c};
  const PanelRangeFn run = ChoosePanelVariant(layout);
  ParallelForRange(layout.panels(), kPanelsGrain, threads,
                   [&](int64_t first, int64_t last) { run(problem, first, last); });
}

void GemvRowMajor(const float* weights, int64_t k, int64_t n, const float* a, int64_t m, const float* bias, float* c,
                  int threads) {
  using namespace gemv_weights_detail;
  PanelLayout shape;
  shape.k = k;
  shape.n = n;
  const Problem problem{&shape, weights, a, m, bias, c};
  const ColumnRangeFn run = ChooseColumnVariant();
  const int64_t lines = (n + kLineFloats - 1) / kLineFloats;
  const int64_t grain = std::max<int64_t>(1, kWeightsGrain / std::max<int64_t>(1, k * kLineFloats));
  ParallelForRange(lines, grain, threads, [&](int64_t first, int64_t last) {
    run(problem, first * kLineFloats, std::min(n, last * kLineFloats));
  });
}

}  // namespace attune
