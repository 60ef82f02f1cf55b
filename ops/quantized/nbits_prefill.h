// The int8 prefill product of the N-bit weight format (accuracy_level 4, many
// rows of A): A quantized per (row, block) to int8 once, as the decode path
// quantizes a row (QuantizeRowInt8), and multiplied with int8 dot products
// against panels of the weights unpacked to int8 once per call. A table of
// kernels per ISA (AVX-512 VNNI only); on other CPUs the float32 panels run.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/quantized/nbits_kernels.h"

namespace attune::quantized {

/// Rows of A quantized per block, laid out for the kernel: rows in groups of
/// 16, each group k-quad after k-quad, so one 64-byte load holds four
/// consecutive k of 16 rows. Values are q + 128 (unsigned), q as
/// QuantizeRowInt8 gives it; rows past `rows` and k past K hold q = 0.
struct PackedInt8Rows {
  static constexpr int64_t kGroupRows = 16;
  int64_t rows = 0, groups = 0, quads = 0, k_blocks = 0;
  std::vector<uint8_t> q;      // [groups][quads][16][4]
  std::vector<float> scale;    // [groups][k_blocks][16]: per-block activation scale (0 for absent rows)
  std::vector<int32_t> sum;    // [groups][k_blocks][16]: Σ q over the block

  void Resize(int64_t m, const NBitsView& w);
};

struct NBitsPrefillKernels {
  const char* name;
  /// Whether `multiply` covers this weight layout (bits, block size, zero points).
  bool (*supports)(const NBitsView& w);
  /// Quantizes row `row` of A (K floats) into `dst` exactly as QuantizeRowInt8
  /// does; false (and the row left undefined) when it holds a NaN or an infinity.
  bool (*pack_row)(const float* a, const NBitsView& w, int64_t row, PackedInt8Rows& dst);
  /// y[r · N + n] for every row r and the outputs of panels [p0, p1) (panels of
  /// kPanelColumns outputs): Σ_blocks fl(scale_a · scale_w) · Σ q_a · (q_w − zp),
  /// the integer sums exact, added in block order in float32.
  void (*multiply)(const NBitsView& w, const PackedInt8Rows& a, int64_t p0, int64_t p1, float* y);
};

/// Outputs per panel of the int8 prefill product; panel bounds do not depend
/// on the thread count, and an output's sum does not depend on the panel.
inline constexpr int64_t kPrefillPanelColumns = 48;

/// The AVX-512 VNNI kernels (nbits_prefill_avx512vnni.cc), in the kernel set
/// of that ISA (nbits_kernels.cc).
extern const NBitsPrefillKernels kNBitsPrefillAvx512Vnni;

}  // namespace attune::quantized
