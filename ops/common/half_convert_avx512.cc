// AVX-512 conversion, 16 elements a step with a masked tail.
#include <immintrin.h>

#include "ops/common/half_convert.h"

namespace attune {
namespace {

inline __mmask16 TailMask(int64_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}

}  // namespace

void WidenHalfAvx512(const uint16_t* src, int64_t count, float* dst) {
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 mask = TailMask(count - i);
    _mm512_mask_storeu_ps(dst + i, mask, _mm512_maskz_cvtph_ps(0xFFFF, _mm256_maskz_loadu_epi16(mask, src + i)));
  }
}

void NarrowToHalfAvx512(const float* src, int64_t count, uint16_t* dst) {
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 mask = TailMask(count - i);
    const __m256i half =
        _mm512_maskz_cvtps_ph(0xFFFF, _mm512_maskz_loadu_ps(mask, src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_mask_storeu_epi16(dst + i, mask, half);
  }
}

}  // namespace attune
