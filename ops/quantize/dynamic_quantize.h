// DynamicQuantizeLinear's arithmetic, shared by its kernel and by the fused
// dynamic-int8 products, which must quantize A exactly as it does: the range
// [min(0, min x), max(0, max x)] mapped onto uint8 with scale (max − min) / 255
// (1 when the range is empty, as ONNX Runtime does), zero point
// round(clamp(−min / scale, 0, 255)), and each x as round(x / scale) + zero
// point, saturated (rounding half to even). NaN elements are left out of the
// range and quantize to 0.
#pragma once

#include <cstdint>

namespace attune::quantize {

struct DynamicQuantParams {
  float scale = 1.0f;
  uint8_t zero_point = 0;
};

/// The scale and zero point of x[0, n).
DynamicQuantParams ComputeDynamicQuantParams(const float* x, int64_t n, int threads);

/// out[i] = saturate(round(x[i] / scale) + zero_point) as uint8.
void QuantizeToUint8(const float* x, int64_t n, DynamicQuantParams p, uint8_t* out, int threads);

}  // namespace attune::quantize
