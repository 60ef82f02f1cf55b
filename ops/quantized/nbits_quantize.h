// Float weights to the blocked N-bit format of MatMulNBits, as ONNX Runtime's
// blockwise quantizer (MatMulNBitsQuantizer, the onnxruntime-genai builder)
// computes it, so a file Attune writes or a model it compresses at load holds
// the same kind of data those tools write:
//   asymmetric: each block's range [min(0, lo), max(0, hi)] maps onto
//               [0, 2^bits - 1]; scale = range / (2^bits - 1), zero point =
//               round(-min / scale) clamped, q = clamp(round(w / scale + zp));
//   symmetric:  scale = m / -2^(bits-1), m the block's value of largest
//               magnitude (signed), q = clamp(round(w / scale) + 2^(bits-1)),
//               and no zero points are stored.
// A block whose weights are all zero gets scale 1 (ORT writes 0: both give 0).
// Rounding is half away from zero. Non-finite weights are refused.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "attune/tensor.h"

namespace attune::quantized {

/// The weights W[n, k] of a product: element (k, n) is at data[k * k_stride +
/// n * n_stride], of type float32, float16 or bfloat16. `data` may be
/// unaligned (weights left in the model file, core/ir/file_constant.h): read it with LoadWeight.
struct FloatWeights {
  const void* data = nullptr;
  ElementType type = ElementType::kFloat32;
  int64_t k = 0, n = 0;
  int64_t k_stride = 0, n_stride = 0;
  /// Called after each slice of 1024 outputs n with the number quantized so far (may be empty).
  std::function<void(int64_t)> rows_done;
};

/// Element `at` of T at `data`, whatever the alignment.
template <typename T>
T LoadWeight(const void* data, int64_t at) {
  T v;
  std::memcpy(&v, static_cast<const char*>(data) + at * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

struct NBitsQuantizeOptions {
  int bits = 4;          // 4 or 8
  int block_size = 32;   // a power of two >= 16
  bool symmetric = false;
};

/// MatMulNBits' constants: B uint8 [N, k_blocks, block·bits/8], scales
/// float32 [N, k_blocks], zero points uint8 [N, ceil(k_blocks·bits/8)]
/// (packed like B; an empty tensor when symmetric).
struct NBitsConstants {
  Tensor b, scales, zero_points;
};

/// Quantizes `w`; `label` names the weight in errors (a NaN or infinite weight, bad options).
/// Output rows are split across `threads` (0: one); every split gives the same bytes.
absl::StatusOr<NBitsConstants> QuantizeToNBits(const FloatWeights& w, const NBitsQuantizeOptions& options,
                                               const std::string& label, int threads = 0);

}  // namespace attune::quantized
