#include "ops/quantized/half_weights.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "attune/element_type.h"
#include "core/memory/pooled_buffer.h"
#include "ops/common/cpu_features.h"
#include "ops/common/omp_team_scope.h"
#include "ops/common/parallel.h"

namespace attune::quantized {
namespace {

// Rows of A up to which the GEMV beats widening panels for sgemm.
constexpr int64_t kGemvRows = 4;
// Outputs per widened panel: 64 · K floats stay in L2 for K up to ~4096.
constexpr int64_t kPanelRows = 64;
// The portable sum runs in 16 lanes, as the AVX-512 variant's zmm does, so
// both give the same bits.
constexpr int kLanes = 16;

inline float Widen(const HalfView& w, uint16_t bits) {
  return w.bf16 ? std::bit_cast<float>(static_cast<uint32_t>(bits) << 16) : HalfToFloat(Float16{bits});
}

void HalfGemvPortable(const HalfView& w, const float* a, float* y, int64_t n0, int64_t n1) {
  for (int64_t j = n0; j < n1; ++j) {
    const uint16_t* row = w.w + j * w.k;
    float lanes[kLanes] = {};
    for (int64_t k = 0; k < w.k; ++k) lanes[k % kLanes] = std::fma(a[k], Widen(w, row[k]), lanes[k % kLanes]);
    // The AVX-512 variant's reduce: halves added pairwise, 16 → 8 → 4 → 2 → 1.
    for (int width = kLanes / 2; width >= 1; width /= 2)
      for (int i = 0; i < width; ++i) lanes[i] += lanes[i + width];
    y[j - n0] = lanes[0];
  }
}

void HalfWidenRowsPortable(const HalfView& w, int64_t n0, int64_t n1, float* dst) {
  for (int64_t j = n0; j < n1; ++j)
    for (int64_t k = 0; k < w.k; ++k) dst[(j - n0) * w.k + k] = Widen(w, w.w[j * w.k + k]);
}

void RoundToBf16Portable(const float* src, int64_t count, uint16_t* dst) {
  for (int64_t i = 0; i < count; ++i) dst[i] = FloatToBFloat16(src[i]).bits;
}

}  // namespace

const std::vector<HalfKernelSet>& AvailableHalfKernels() {
  static const std::vector<HalfKernelSet> kernels = [] {
    std::vector<HalfKernelSet> k = {{IsaName(Isa::kGeneric), HalfGemvPortable, HalfWidenRowsPortable, RoundToBf16Portable}};
    if (IsaSupported(Isa::kAvx512)) k.push_back({IsaName(Isa::kAvx512), HalfGemvAvx512, HalfWidenRowsAvx512, RoundToBf16Avx512});
    return k;
  }();
  return kernels;
}

const HalfKernelSet& SelectedHalfKernels() {
  const std::vector<HalfKernelSet>& all = AvailableHalfKernels();
  return ActiveIsa() == Isa::kAvx512 ? all.back() : all[0];
}

void MultiplyHalfWeights(const HalfKernelSet& kernels, const HalfView& w, const float* a, int64_t m,
                         const float* bias, float* y, int threads) {
  const int64_t k = w.k, n = w.n;
  if (m <= kGemvRows) {
    const int64_t grain = std::max<int64_t>(16, (int64_t{1} << 16) / std::max<int64_t>(k, 1));
    ParallelForRange(n, grain, threads, [&](int64_t n0, int64_t n1) {
      for (int64_t r = 0; r < m; ++r) kernels.gemv(w, a + r * k, y + r * n + n0, n0, n1);
    });
  } else {
    // Panel bounds do not depend on the thread count, so neither do the bits.
    const int64_t panels = (n + kPanelRows - 1) / kPanelRows;
    ParallelForRange(panels, 1, threads, [&](int64_t p0, int64_t p1) {
      // From the pool: a fresh allocation of this size costs page faults every call.
      PooledBuffer panel_buffer(static_cast<size_t>(kPanelRows * k) * sizeof(float));
      float* panel = static_cast<float*>(panel_buffer.data());
      std::vector<float> fallback;
      if (panel == nullptr) panel = (fallback = std::vector<float>(kPanelRows * k)).data();
      OmpTeamScope one_thread(1);
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t n0 = p * kPanelRows, rows = std::min(kPanelRows, n - n0);
        kernels.widen_rows(w, n0, n0 + rows, panel);
        dnnl_sgemm('N', 'T', m, rows, k, 1.0f, a, k, panel, k, 0.0f, y + n0, n);
      }
    });
  }
  if (bias != nullptr)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) y[r * n + j] += bias[j];
}

}  // namespace attune::quantized
