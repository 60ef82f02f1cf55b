// Products over float16 / bfloat16 weights [N, K] with float32 activations
// (attune.HalfWeightMatMul, core/schema/half_weight_matmul.h): each weight is
// widened to float32 in registers and the sums run in float32, so a product
// reads 2 bytes per weight. A table of variants per ISA, chosen once at
// start-up; tests run each.
#pragma once

#include <cstdint>
#include <vector>

namespace attune::quantized {

struct HalfView {
  const uint16_t* w = nullptr;  // [n][k], float16 or bfloat16 bits
  bool bf16 = false;
  int64_t k = 0, n = 0;
};

/// y[j - n0] = Σ_k a[k] · W[j, k] for j in [n0, n1), one float32 sum per
/// output in the same order for every variant's lanes and every thread count.
using HalfGemvFn = void (*)(const HalfView& w, const float* a, float* y, int64_t n0, int64_t n1);
/// Rows [n0, n1) of W widened to float32 into dst[(j - n0) · k + k'].
using HalfWidenRowsFn = void (*)(const HalfView& w, int64_t n0, int64_t n1, float* dst);
/// dst[i] = the bfloat16 bits of src[i] rounded to nearest even, as
/// FloatToBFloat16 rounds (subnormals kept, NaN stays NaN).
using RoundToBf16Fn = void (*)(const float* src, int64_t count, uint16_t* dst);

struct HalfKernelSet {
  const char* name;
  HalfGemvFn gemv;
  HalfWidenRowsFn widen_rows;
  RoundToBf16Fn round_to_bf16;
};

/// Every variant this CPU can run, portable first.
const std::vector<HalfKernelSet>& AvailableHalfKernels();
/// The variant for the active ISA (ops/common/cpu_features.h).
const HalfKernelSet& SelectedHalfKernels();

/// y[m, N] = a[m, K] · Wᵀ (+ bias[N], may be null). Decode rows (m ≤ 4) run
/// the GEMV over outputs split across threads; more rows widen panels of W
/// and multiply them with sgemm. Same bits for every thread count.
void MultiplyHalfWeights(const HalfKernelSet& kernels, const HalfView& w, const float* a, int64_t m,
                         const float* bias, float* y, int threads);

// The variants, for the table.
void HalfGemvAvx512(const HalfView& w, const float* a, float* y, int64_t n0, int64_t n1);
void HalfWidenRowsAvx512(const HalfView& w, int64_t n0, int64_t n1, float* dst);
void RoundToBf16Avx512(const float* src, int64_t count, uint16_t* dst);

}  // namespace attune::quantized
