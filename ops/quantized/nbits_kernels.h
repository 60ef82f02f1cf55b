// The inner products of the blocked N-bit weight format (MatMulNBits): the
// weights stay packed as the file has them ([N, k_blocks, blob] uint8, K
// contiguous per output) and are unpacked in registers, so a product reads
// each weight once at 4 or 8 bits. A table of variants per ISA (portable,
// AVX2, AVX-512, AVX-512 VNNI), chosen once at start-up; tests run each.
#pragma once

#include <cstdint>
#include <vector>

namespace attune::quantized {

/// The packed weights of one product and what dequantizes them:
/// W[n, k] = (q[n, k] - zero_point(n, k / block_size)) · scales[n · k_blocks + k / block_size].
struct NBitsView {
  const uint8_t* b = nullptr;  // [n][k_blocks][blob_size]
  const float* scales = nullptr;          // [n][k_blocks]
  const uint8_t* zero_points_u8 = nullptr;  // [n][k_blocks] unpacked, or null
  const float* zero_points_f32 = nullptr;   // [n][k_blocks], or null (then 2^(bits-1))
  int64_t k = 0, n = 0, bits = 4, block_size = 32, k_blocks = 0, blob_size = 0;

  float ZeroPoint(int64_t row, int64_t block) const {
    if (zero_points_f32 != nullptr) return zero_points_f32[row * k_blocks + block];
    if (zero_points_u8 != nullptr) return zero_points_u8[row * k_blocks + block];
    return static_cast<float>(int64_t{1} << (bits - 1));
  }
  int ZeroPointInt(int64_t row, int64_t block) const {
    return zero_points_u8 != nullptr ? zero_points_u8[row * k_blocks + block] : 1 << (bits - 1);
  }
  const uint8_t* Blob(int64_t row, int64_t block) const { return b + (row * k_blocks + block) * blob_size; }
};

/// One row of A quantized per block to int8 (accuracy_level 4):
/// a[k] ≈ q[k] · scale[k / block_size]; q padded with zeros to k_blocks · block_size.
struct Int8Row {
  const int8_t* q = nullptr;
  const float* scale = nullptr;  // per block
  const int32_t* sum = nullptr;  // per block: Σ q, for the zero-point correction
};

/// y[n] for n in [n0, n1) of one row: Σ_k a[k] · W[n, k], with A in float32;
/// each block's Σ a·(q − zp) is formed in float32 and times the block's scale.
using GemvFloatFn = void (*)(const NBitsView& w, const float* a, float* y, int64_t n0, int64_t n1);
/// The same with A as int8 blocks: Σ_blocks scale_a · scale_w · (Σ q_a·q_w − zp · Σ q_a).
using GemvInt8Fn = void (*)(const NBitsView& w, const Int8Row& a, float* y, int64_t n0, int64_t n1);
/// Rows [n0, n1) of W dequantized to dst[(n − n0) · k + k'] (float32, (q − zp) · scale per weight).
using DequantizeRowsFn = void (*)(const NBitsView& w, int64_t n0, int64_t n1, float* dst);

struct NBitsPrefillKernels;  // nbits_prefill.h

struct NBitsKernelSet {
  const char* name;
  GemvFloatFn gemv_float;
  GemvInt8Fn gemv_int8;
  DequantizeRowsFn dequantize_rows;
  /// The int8 product of many rows (accuracy_level 4), or null: then float32 panels.
  const NBitsPrefillKernels* prefill_int8 = nullptr;
};

/// Every variant this CPU can run, portable first.
const std::vector<NBitsKernelSet>& AvailableNBitsKernels();
/// The variant for the active ISA (ops/common/cpu_features.h; VNNI when the CPU has it).
const NBitsKernelSet& SelectedNBitsKernels();

/// Quantizes one row of K floats per block (symmetric, scale = max|a| / 127,
/// round to nearest even) into q [k_blocks · block_size], scale and sum
/// [k_blocks]. Returns false when the row holds a NaN or an infinity (the
/// caller then takes the float32 path, which propagates them as the
/// reference does).
bool QuantizeRowInt8(const float* a, int64_t k, int64_t block_size, int8_t* q, float* scale, int32_t* sum);

// The portable variant, also the fallback of the SIMD ones for the layouts
// they do not cover (2 bits; blocks of 16 for int8).
void GemvFloatPortable(const NBitsView& w, const float* a, float* y, int64_t n0, int64_t n1);
void GemvInt8Portable(const NBitsView& w, const Int8Row& a, float* y, int64_t n0, int64_t n1);
void DequantizeRowsPortable(const NBitsView& w, int64_t n0, int64_t n1, float* dst);

}  // namespace attune::quantized
