// The portable variant of the N-bit products, the int8 row quantizer, and the
// choice of variant.
#include "ops/quantized/nbits_kernels.h"

#include <algorithm>
#include <cmath>

#include "ops/common/cpu_features.h"
#include "ops/quantized/nbits_prefill.h"

namespace attune::quantized {

void GemvFloatAvx2(const NBitsView& w, const float* a, float* y, int64_t n0, int64_t n1);
void GemvFloatAvx512(const NBitsView& w, const float* a, float* y, int64_t n0, int64_t n1);
void DequantizeRowsAvx512(const NBitsView& w, int64_t n0, int64_t n1, float* dst);
void GemvInt8Avx2(const NBitsView& w, const Int8Row& a, float* y, int64_t n0, int64_t n1);
void GemvInt8Avx512Vnni(const NBitsView& w, const Int8Row& a, float* y, int64_t n0, int64_t n1);

namespace {

// Quantized value kk of a block's blob (bits 2, 4 or 8, lowest bits first).
inline int UnpackQ(const uint8_t* blob, int64_t kk, int64_t bits) {
  if (bits == 8) return blob[kk];
  if (bits == 4) return (blob[kk >> 1] >> ((kk & 1) * 4)) & 0xF;
  return (blob[kk >> 2] >> ((kk & 3) * 2)) & 0x3;
}

// VNNI needs AVX-512 state (checked by IsaSupported) and the extension itself.
bool HasAvx512Vnni() { return IsaSupported(Isa::kAvx512) && __builtin_cpu_supports("avx512vnni"); }

}  // namespace

void GemvFloatPortable(const NBitsView& w, const float* a, float* y, int64_t n0, int64_t n1) {
  for (int64_t n = n0; n < n1; ++n) {
    float acc = 0.0f;
    for (int64_t blk = 0; blk < w.k_blocks; ++blk) {
      const uint8_t* blob = w.Blob(n, blk);
      const float zp = w.ZeroPoint(n, blk);
      const int64_t k0 = blk * w.block_size, len = std::min(w.block_size, w.k - k0);
      float block_acc = 0.0f;
      for (int64_t kk = 0; kk < len; ++kk)
        block_acc += a[k0 + kk] * (static_cast<float>(UnpackQ(blob, kk, w.bits)) - zp);
      acc += block_acc * w.scales[n * w.k_blocks + blk];
    }
    y[n - n0] = acc;
  }
}

void GemvInt8Portable(const NBitsView& w, const Int8Row& a, float* y, int64_t n0, int64_t n1) {
  for (int64_t n = n0; n < n1; ++n) {
    float acc = 0.0f;
    for (int64_t blk = 0; blk < w.k_blocks; ++blk) {
      const uint8_t* blob = w.Blob(n, blk);
      const int8_t* q = a.q + blk * w.block_size;
      int32_t dot = 0;
      for (int64_t kk = 0; kk < w.block_size; ++kk) dot += q[kk] * UnpackQ(blob, kk, w.bits);
      dot -= w.ZeroPointInt(n, blk) * a.sum[blk];
      acc += static_cast<float>(dot) * (a.scale[blk] * w.scales[n * w.k_blocks + blk]);
    }
    y[n - n0] = acc;
  }
}

void DequantizeRowsPortable(const NBitsView& w, int64_t n0, int64_t n1, float* dst) {
  for (int64_t n = n0; n < n1; ++n) {
    float* row = dst + (n - n0) * w.k;
    for (int64_t blk = 0; blk < w.k_blocks; ++blk) {
      const uint8_t* blob = w.Blob(n, blk);
      const float zp = w.ZeroPoint(n, blk), scale = w.scales[n * w.k_blocks + blk];
      const int64_t k0 = blk * w.block_size, len = std::min(w.block_size, w.k - k0);
      for (int64_t kk = 0; kk < len; ++kk)
        row[k0 + kk] = (static_cast<float>(UnpackQ(blob, kk, w.bits)) - zp) * scale;
    }
  }
}

bool QuantizeRowInt8(const float* a, int64_t k, int64_t block_size, int8_t* q, float* scale, int32_t* sum) {
  const int64_t k_blocks = (k + block_size - 1) / block_size;
  for (int64_t blk = 0; blk < k_blocks; ++blk) {
    const int64_t k0 = blk * block_size, len = std::min(block_size, k - k0);
    float amax = 0.0f;
    for (int64_t i = 0; i < len; ++i) amax = std::max(amax, std::fabs(a[k0 + i]));
    if (!std::isfinite(amax)) return false;  // also catches NaN: max(0, NaN) keeps 0, so test each
    for (int64_t i = 0; i < len; ++i)
      if (std::isnan(a[k0 + i])) return false;
    const float s = amax / 127.0f;
    const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    int32_t total = 0;
    for (int64_t i = 0; i < block_size; ++i) {
      const float v = i < len ? std::nearbyint(a[k0 + i] * inv) : 0.0f;
      const int8_t qi = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
      q[k0 + i] = qi;
      total += qi;
    }
    scale[blk] = s;
    sum[blk] = total;
  }
  return true;
}

const std::vector<NBitsKernelSet>& AvailableNBitsKernels() {
  static const std::vector<NBitsKernelSet> kernels = [] {
    std::vector<NBitsKernelSet> k = {{IsaName(Isa::kGeneric), GemvFloatPortable, GemvInt8Portable,
                                      DequantizeRowsPortable}};
    if (IsaSupported(Isa::kAvx2)) k.push_back({IsaName(Isa::kAvx2), GemvFloatAvx2, GemvInt8Avx2,
                                               DequantizeRowsPortable});
    if (IsaSupported(Isa::kAvx512))
      k.push_back({IsaName(Isa::kAvx512), GemvFloatAvx512, GemvInt8Avx2, DequantizeRowsAvx512});
    if (HasAvx512Vnni())
      k.push_back(
          {"avx512vnni", GemvFloatAvx512, GemvInt8Avx512Vnni, DequantizeRowsAvx512, &kNBitsPrefillAvx512Vnni});
    return k;
  }();
  return kernels;
}

const NBitsKernelSet& SelectedNBitsKernels() {
  const std::vector<NBitsKernelSet>& all = AvailableNBitsKernels();
  switch (ActiveIsa()) {
    case Isa::kAvx512: return all.back();  // avx512vnni when present, else avx512
    case Isa::kAvx2: return all[1];
    case Isa::kGeneric: break;
  }
  return all[0];
}

}  // namespace attune::quantized
