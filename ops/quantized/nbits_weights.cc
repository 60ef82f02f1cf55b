#include "ops/quantized/nbits_weights.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/common/omp_team_scope.h"
#include "ops/common/parallel.h"
#include "ops/quantized/kernels.h"
#include "ops/quantized/nbits_prefill.h"

namespace attune::quantized {
namespace {

// Rows of A up to which each row streams the packed weights once through the
// GEMV (decode); above it, panels of W are unpacked into cache and multiplied
// by int8 tiles (accuracy_level 4) or dequantized and multiplied by a float32
// GEMM (prefill).
constexpr int64_t kGemvMaxRows = 4;
// Outputs per panel: 64 rows of W of K = 4096 dequantize to 1 MiB, L2-sized.
constexpr int64_t kPanelRows = 64;

std::vector<float> ToFloat(const Tensor& t) {
  std::vector<float> out(t.num_elements());
  if (t.type() == ElementType::kFloat16)
    for (int64_t i = 0; i < t.num_elements(); ++i) out[i] = HalfToFloat(t.data<Float16>()[i]);
  else
    std::copy_n(t.data<float>(), t.num_elements(), out.data());
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NBitsWeights>> NBitsWeights::Create(const qmatmul::QuantizedMatMulParams& params,
                                                                    const std::string& label, Tensor b,
                                                                    Tensor scales, Tensor zero_points) {
  std::unique_ptr<NBitsWeights> w(new NBitsWeights());
  w->params_ = params;
  const int64_t n = params.n, kb = params.k_blocks();
  NBitsView& v = w->view_;
  v.k = params.k;
  v.n = n;
  v.bits = params.bits;
  v.block_size = params.block_size;
  v.k_blocks = kb;
  v.blob_size = params.blob_size();
  v.b = b.data<uint8_t>();
  if (scales.type() == ElementType::kFloat32) {
    v.scales = scales.data<float>();
  } else {
    w->scales_f32_ = ToFloat(scales);
    v.scales = w->scales_f32_.data();
  }
  for (int64_t i = 0; i < n * kb; ++i) w->nonfinite_scales_ |= !std::isfinite(v.scales[i]);
  if (!zero_points.empty() && zero_points.type() == ElementType::kUint8) {
    // Packed like B: per row, ceil(k_blocks·bits/8) bytes, lowest bits first.
    const int64_t row_bytes = params.zero_point_row_bytes(), per_byte = 8 / params.bits;
    const int mask = (1 << params.bits) - 1;
    w->zero_points_u8_.resize(n * kb);
    const uint8_t* zp = zero_points.data<uint8_t>();
    for (int64_t r = 0; r < n; ++r)
      for (int64_t blk = 0; blk < kb; ++blk)
        w->zero_points_u8_[r * kb + blk] = static_cast<uint8_t>(
            (zp[r * row_bytes + blk / per_byte] >> ((blk % per_byte) * params.bits)) & mask);
    v.zero_points_u8 = w->zero_points_u8_.data();
  } else if (!zero_points.empty()) {
    w->zero_points_f32_ = ToFloat(zero_points);
    v.zero_points_f32 = w->zero_points_f32_.data();
  }
  w->b_ = std::move(b);
  w->scales_ = std::move(scales);
  w->zero_points_ = std::move(zero_points);
  (void)label;
  return w;
}

const Tensor& NBitsWeights::original(int input) const {
  if (input == qmatmul::kInputB) return b_;
  if (input == qmatmul::kInputScales) return scales_;
  return zero_points_;
}

absl::Status NBitsWeights::Multiply(const NBitsKernelSet& kernels, const float* a, int64_t m, const float* bias,
                                    float* y, int threads) const {
  if (m <= kGemvMaxRows && !nonfinite_scales_) MultiplyRows(kernels, a, m, y, threads);
  else if (Int8Activations() && !nonfinite_scales_ && kernels.prefill_int8 != nullptr &&
           kernels.prefill_int8->supports(view_))
    MultiplyInt8Panels(kernels, a, m, y, threads);
  else MultiplyPanels(kernels, a, m, y, threads);
  if (bias != nullptr)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < params_.n; ++j) y[r * params_.n + j] += bias[j];
  return absl::OkStatus();
}

// Decode: each row of A against every packed weight, outputs split across threads.
void NBitsWeights::MultiplyRows(const NBitsKernelSet& kernels, const float* a, int64_t m, float* y,
                                int threads) const {
  const int64_t k = params_.k, n = params_.n, kb = params_.k_blocks(), padded = kb * params_.block_size;
  const bool int8 = Int8Activations();
  std::vector<int8_t> q(int8 ? m * padded : 0);
  std::vector<float> qscale(int8 ? m * kb : 0);
  std::vector<int32_t> qsum(int8 ? m * kb : 0);
  std::vector<bool> row_int8(m, false);
  for (int64_t r = 0; r < m && int8; ++r)
    row_int8[r] = QuantizeRowInt8(a + r * k, k, params_.block_size, q.data() + r * padded, qscale.data() + r * kb,
                                  qsum.data() + r * kb);
  // Outputs per task: enough work to amortise a thread's start.
  const int64_t grain = std::max<int64_t>(16, (int64_t{1} << 16) / std::max<int64_t>(k, 1));
  ParallelForRange(n, grain, threads, [&](int64_t n0, int64_t n1) {
    for (int64_t r = 0; r < m; ++r) {
      if (row_int8[r])
        kernels.gemv_int8(view_, Int8Row{q.data() + r * padded, qscale.data() + r * kb, qsum.data() + r * kb},
                          y + r * n + n0, n0, n1);
      else
        kernels.gemv_float(view_, a + r * k, y + r * n + n0, n0, n1);
    }
  });
}

// Float zero points have no integer correction: such files keep float32 activations.
bool NBitsWeights::Int8Activations() const {
  return params_.activation_mode() == qmatmul::ActivationMode::kInt8Blocks && view_.zero_points_f32 == nullptr;
}

// Prefill at accuracy_level 4: every row of A quantized once (rows split
// across threads), then panels of outputs split across threads; a row holding
// a NaN or an infinity takes the float32 GEMV afterwards, as in decode. No
// output's sum depends on the split, so every thread count gives the same bits.
void NBitsWeights::MultiplyInt8Panels(const NBitsKernelSet& kernels, const float* a, int64_t m, float* y,
                                      int threads) const {
  const NBitsPrefillKernels& prefill = *kernels.prefill_int8;
  const int64_t k = params_.k, n = params_.n;
  thread_local PackedInt8Rows calling_thread_rows;
  PackedInt8Rows& rows = calling_thread_rows;  // the workers must see this thread's copy
  rows.Resize(m, view_);
  std::vector<uint8_t> row_int8(m, 0);
  ParallelForRange(m, 8, threads, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) row_int8[r] = prefill.pack_row(a + r * k, view_, r, rows);
  });
  const int64_t panels = (n + kPrefillPanelColumns - 1) / kPrefillPanelColumns;
  ParallelForRange(panels, 1, threads, [&](int64_t p0, int64_t p1) { prefill.multiply(view_, rows, p0, p1, y); });
  const int64_t grain = std::max<int64_t>(16, (int64_t{1} << 16) / std::max<int64_t>(k, 1));
  for (int64_t r = 0; r < m; ++r)
    if (!row_int8[r])
      ParallelForRange(n, grain, threads,
                       [&](int64_t n0, int64_t n1) { kernels.gemv_float(view_, a + r * k, y + r * n + n0, n0, n1); });
}

void PackedInt8Rows::Resize(int64_t m, const NBitsView& w) {
  rows = m;
  groups = (m + kGroupRows - 1) / kGroupRows;
  quads = w.k_blocks * w.block_size / 4;
  k_blocks = w.k_blocks;
  // Rows past m stay q = 0 (stored as 128) with scale 0; rows before it are all written.
  q.assign(groups * quads * kGroupRows * 4, uint8_t{128});
  scale.assign(groups * k_blocks * kGroupRows, 0.0f);
  sum.assign(groups * k_blocks * kGroupRows, 0);
}

// Prefill: panels of kPanelRows outputs dequantized to float32 in cache and
// multiplied by a single-threaded sgemm; panel bounds do not depend on the
// thread count, so neither do the bits.
void NBitsWeights::MultiplyPanels(const NBitsKernelSet& kernels, const float* a, int64_t m, float* y,
                                  int threads) const {
  const int64_t k = params_.k, n = params_.n, panels = (n + kPanelRows - 1) / kPanelRows;
  ParallelForRange(panels, 1, threads, [&](int64_t p0, int64_t p1) {
    std::vector<float> panel(kPanelRows * k);
    OmpTeamScope one_thread(1);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t n0 = p * kPanelRows, rows = std::min(kPanelRows, n - n0);
      kernels.dequantize_rows(view_, n0, n0 + rows, panel.data());
      dnnl_sgemm('N', 'T', m, rows, k, 1.0f, a, k, panel.data(), k, 0.0f, y + n0, n);
    }
  });
}

absl::StatusOr<Tensor> ConstantInput(const KernelInfo& info, int i, const std::string& label, const char* name) {
  if (i < static_cast<int>(info.released_constants.size()) && info.released_constants[i] != nullptr)
    return info.released_constants[i]->Restore();
  if (i < static_cast<int>(info.constant_inputs.size()) && info.constant_inputs[i] != nullptr)
    return *info.constant_inputs[i];
  return absl::UnimplementedError(
      absl::StrCat(label, ": input '", name, "' must be a constant (an initializer); Attune packs it at load"));
}

}  // namespace attune::quantized
