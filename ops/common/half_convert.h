// float16 ↔ float32 conversion of whole buffers, for Cast and for the
// products that run float16 tensors in float32 (ops/matmul/matmul_compute.cc).
// The vector variants use the hardware conversion (vcvtph2ps / vcvtps2ph),
// which gives the same values as HalfToFloat / FloatToHalf: widening is
// exact, narrowing rounds to nearest even, overflows to ±inf and keeps NaN a
// NaN. Chosen once from the active ISA; tests run each.
#pragma once

#include <cstdint>
#include <vector>

namespace attune {

using WidenHalfFn = void (*)(const uint16_t* src, int64_t count, float* dst);
using NarrowToHalfFn = void (*)(const float* src, int64_t count, uint16_t* dst);

struct HalfConvertSet {
  const char* name;
  WidenHalfFn widen;
  NarrowToHalfFn narrow;
};

/// Every variant this CPU can run, portable first.
const std::vector<HalfConvertSet>& AvailableHalfConverts();
/// The variant for the active ISA.
const HalfConvertSet& SelectedHalfConvert();

/// dst[i] = float(src[i]) with the selected variant, split across `threads`.
void WidenHalf(const uint16_t* src, int64_t count, float* dst, int threads);
/// dst[i] = float16(src[i]) rounded to nearest even, split across `threads`.
void NarrowToHalf(const float* src, int64_t count, uint16_t* dst, int threads);

// The variants, for the table.
void WidenHalfAvx2(const uint16_t* src, int64_t count, float* dst);
void NarrowToHalfAvx2(const float* src, int64_t count, uint16_t* dst);
void WidenHalfAvx512(const uint16_t* src, int64_t count, float* dst);
void NarrowToHalfAvx512(const float* src, int64_t count, uint16_t* dst);

}  // namespace attune
