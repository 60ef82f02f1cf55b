// F16C conversion, 8 elements a step; the tail goes through the portable
// conversion, which gives the same values.
#include <immintrin.h>

#include "attune/element_type.h"
#include "ops/common/half_convert.h"

namespace attune {

void WidenHalfAvx2(const uint16_t* src, int64_t count, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < count; ++i) dst[i] = HalfToFloat(Float16{src[i]});
}

void NarrowToHalfAvx2(const float* src, int64_t count, uint16_t* dst) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < count; ++i) dst[i] = FloatToHalf(src[i]).bits;
}

}  // namespace attune
