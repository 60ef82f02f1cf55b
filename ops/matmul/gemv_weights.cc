#include "ops/matmul/gemv_weights.h"

#include <algorithm>

#include "core/memory/pooled_buffer.h"
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
      const float x = p.a[r * p.lda + kk];
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

// More rows than four are bound by the FMAs, not by the weights' stream:
// AVX-512 machines take zmm tiles there.
PanelRangeFn ChoosePanelVariant(const PanelLayout& layout, int64_t m) {
  if (layout.panel_cols != kSimdPanelCols || !UseYmm()) return PanelRangeGeneric;
  return m > kGemvStreamBoundRows && ActiveIsa() == Isa::kAvx512 ? PanelRangeAvx512ManyRows : PanelRangeAvx2;
}

ColumnRangeFn ChooseColumnVariant() { return UseYmm() ? ColumnRangeAvx2 : ColumnRangeGeneric; }

}  // namespace
}  // namespace gemv_weights_detail

namespace {
// Panels per thread below which one thread does it all: a panel of 64
// columns is K · 256 bytes (192 KB at K = 768), several microseconds of reading.
constexpr int64_t kPanelsGrain = 2;
// Row-major products: K slices, and the fewest rows a slice has. Threads
// splitting columns instead read every row in pieces, a stream each, which
// ran slower on two threads than one did (33 against 19.5 ms for GPT-2's
// decode weights in bench/gemv_bench); slices are whole rows, one stream each.
constexpr int64_t kMaxSlices = 8;
constexpr int64_t kMinSliceRows = 64;
}  // namespace

int64_t GemvPanelsFastRows(const PanelLayout& layout) {
  return layout.panel_cols == gemv_weights_detail::kSimdPanelCols && ActiveIsa() == Isa::kAvx512
             ? kGemvMaxRowsOfA
             : kGemvStreamBoundRows;
}

void GemvPanels(const PanelLayout& layout, const float* weights, const float* a, int64_t m, const float* bias,
                float* c, int threads) {
  using namespace gemv_weights_detail;
  const Problem problem{&layout, weights, a, m, bias, c};
  const PanelRangeFn run = ChoosePanelVariant(layout, m);
  ParallelForRange(layout.panels(), kPanelsGrain, threads,
                   [&](int64_t first, int64_t last) { run(problem, first, last); });
}

void GemvRowMajor(const float* weights, int64_t k, int64_t n, const float* a, int64_t m, const float* bias, float* c,
                  int threads) {
  using namespace gemv_weights_detail;
  const ColumnRangeFn run = ChooseColumnVariant();
  const int64_t slices = std::clamp<int64_t>(k / kMinSliceRows, 1, kMaxSlices);
  if (slices == 1) {
    PanelLayout shape;
    shape.k = k;
    shape.n = n;
    run(Problem{&shape, weights, a, m, bias, c, k}, 0, n);
    return;
  }
  PooledBuffer partials(sizeof(float) * slices * m * n);
  float* partial = static_cast<float*>(partials.data());
  ParallelForRange(slices, 1, threads, [&](int64_t first, int64_t last) {
    for (int64_t s = first; s < last; ++s) {
      const int64_t k0 = k * s / slices, k1 = k * (s + 1) / slices;
      PanelLayout shape;
      shape.k = k1 - k0;
      shape.n = n;
      run(Problem{&shape, weights + k0 * n, a + k0, m, nullptr, partial + s * m * n, k}, 0, n);
    }
  });
  for (int64_t r = 0; r < m; ++r) {
    float* out = c + r * n;
    for (int64_t j = 0; j < n; ++j) out[j] = bias != nullptr ? bias[j] : 0.0f;
    for (int64_t s = 0; s < slices; ++s) {
      const float* part = partial + (s * m + r) * n;
      for (int64_t j = 0; j < n; ++j) out[j] += part[j];
    }
  }
}

}  // namespace attune
