#include "ops/quantized/nbits_quantize.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/parallel.h"

namespace attune::quantized {
namespace {

float ReadWeight(const FloatWeights& w, int64_t k, int64_t n) {
  const int64_t at = k * w.k_stride + n * w.n_stride;
  switch (w.type) {
    case ElementType::kFloat16: return HalfToFloat(LoadWeight<Float16>(w.data, at));
    case ElementType::kBFloat16: return BFloat16ToFloat(LoadWeight<BFloat16>(w.data, at));
    default: return LoadWeight<float>(w.data, at);
  }
}

struct BlockCode {
  float scale = 1.0f;
  int zero_point = 0;
};

// The scale and zero point of one block of values, ORT's convention (see the header).
BlockCode CodeBlock(const float* v, int64_t count, const NBitsQuantizeOptions& options) {
  const int levels = (1 << options.bits) - 1;
  const int mid = 1 << (options.bits - 1);
  BlockCode code;
  if (options.symmetric) {
    float extreme = 0.0f;
    for (int64_t i = 0; i < count; ++i)
      if (std::fabs(v[i]) > std::fabs(extreme)) extreme = v[i];
    code.zero_point = mid;
    if (extreme != 0.0f) code.scale = extreme / static_cast<float>(-mid);
    return code;
  }
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < count; ++i) {
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
  }
  if (hi - lo > 0.0f) {
    code.scale = (hi - lo) / static_cast<float>(levels);
    code.zero_point = static_cast<int>(std::clamp(std::round(-lo / code.scale), 0.0f, static_cast<float>(levels)));
  }
  return code;
}

int QuantizeValue(float v, const BlockCode& code, int levels) {
  const float q = std::round(v / code.scale) + static_cast<float>(code.zero_point);
  return static_cast<int>(std::clamp(q, 0.0f, static_cast<float>(levels)));
}

// Packs `bits`-wide values into bytes, lowest bits first.
void PackValue(uint8_t* bytes, int64_t index, int value, int bits) {
  if (bits == 8) {
    bytes[index] = static_cast<uint8_t>(value);
    return;
  }
  const int64_t byte = index / 2;
  bytes[byte] = static_cast<uint8_t>(index % 2 == 0 ? (bytes[byte] & 0xF0) | value : (bytes[byte] & 0x0F) | (value << 4));
}

absl::Status CheckOptions(const FloatWeights& w, const NBitsQuantizeOptions& options, const std::string& label) {
  if (options.bits != 4 && options.bits != 8)
    return absl::InvalidArgumentError(absl::StrCat(label, ": bits must be 4 or 8, got ", options.bits));
  const int block = options.block_size;
  if (block < 16 || block > 256 || (block & (block - 1)) != 0)
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": block size must be a power of two from 16 to 256, got ", block));
  if (w.k <= 0 || w.n <= 0) return absl::InvalidArgumentError(absl::StrCat(label, ": empty weight"));
  if (w.type != ElementType::kFloat32 && w.type != ElementType::kFloat16 && w.type != ElementType::kBFloat16)
    return absl::InvalidArgumentError(absl::StrCat(label, ": weights must be float32, float16 or bfloat16"));
  return absl::OkStatus();
}

// Quantizes output row n into `out`; false when a weight of it is NaN or infinite.
bool QuantizeRow(const FloatWeights& w, const NBitsQuantizeOptions& options, int64_t n, float* values,
                 NBitsConstants& out) {
  const int64_t block = options.block_size, k_blocks = out.scales.shape()[1], blob = out.b.shape()[2];
  const int levels = (1 << options.bits) - 1;
  for (int64_t kb = 0; kb < k_blocks; ++kb) {
    const int64_t k0 = kb * block, count = std::min(block, w.k - k0);
    for (int64_t i = 0; i < count; ++i) {
      values[i] = ReadWeight(w, k0 + i, n);
      if (!std::isfinite(values[i])) return false;
    }
    const BlockCode code = CodeBlock(values, count, options);
    out.scales.data<float>()[n * k_blocks + kb] = code.scale;
    uint8_t* blob_bytes = out.b.data<uint8_t>() + (n * k_blocks + kb) * blob;
    // The padding of a last partial block holds the zero point: it dequantizes to 0.
    for (int64_t i = 0; i < block; ++i)
      PackValue(blob_bytes, i, i < count ? QuantizeValue(values[i], code, levels) : code.zero_point, options.bits);
    if (!options.symmetric)
      PackValue(out.zero_points.data<uint8_t>() + n * out.zero_points.shape()[1], kb, code.zero_point, options.bits);
  }
  return true;
}

}  // namespace

absl::StatusOr<NBitsConstants> QuantizeToNBits(const FloatWeights& w, const NBitsQuantizeOptions& options,
                                               const std::string& label, int threads) {
  RETURN_IF_ERROR(CheckOptions(w, options, label));
  const int64_t block = options.block_size;
  const int64_t k_blocks = (w.k + block - 1) / block;
  const int64_t blob = block * options.bits / 8;
  const int64_t zp_row = (k_blocks * options.bits + 7) / 8;
  NBitsConstants out;
  ASSIGN_OR_RETURN(out.b, Tensor::Create(ElementType::kUint8, {w.n, k_blocks, blob}));
  ASSIGN_OR_RETURN(out.scales, Tensor::Create(ElementType::kFloat32, {w.n, k_blocks}));
  if (!options.symmetric) {
    ASSIGN_OR_RETURN(out.zero_points, Tensor::Create(ElementType::kUint8, {w.n, zp_row}));
  }
  // Rows in slices (each row on its own, so any split gives the same bytes), threads within a slice.
  constexpr int64_t kSlice = 1024;
  for (int64_t s0 = 0; s0 < w.n; s0 += kSlice) {
    const int64_t s1 = std::min(w.n, s0 + kSlice);
    std::atomic<int64_t> first_bad{s1};
    ParallelForRange(s1 - s0, 16, threads, [&](int64_t r0, int64_t r1) {
      std::vector<float> values(block);
      for (int64_t n = s0 + r0; n < s0 + r1; ++n)
        if (!QuantizeRow(w, options, n, values.data(), out)) {
          int64_t seen = first_bad.load();
          while (n < seen && !first_bad.compare_exchange_weak(seen, n)) {
          }
        }
    });
    if (first_bad.load() < s1) {
      const int64_t n = first_bad.load();
      for (int64_t k = 0; k < w.k; ++k)
        if (!std::isfinite(ReadWeight(w, k, n)))
          return absl::InvalidArgumentError(
              absl::StrCat(label, ": weight (k ", k, ", n ", n, ") is not finite; it cannot be quantized"));
    }
    if (w.rows_done) w.rows_done(s1);
  }
  return out;
}

}  // namespace attune::quantized
