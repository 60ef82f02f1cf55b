// AVX-512 VNNI int8 path of the N-bit products: vpdpbusd on ymm registers.
#include "ops/quantized/nbits_int8_impl.h"

namespace attune::quantized {
namespace {

struct VnniDot {
  static constexpr bool kBits8 = true;  // vpdpbusd adds in int32, exact for bytes
  static __m256i Step(__m256i acc, __m256i weights, __m256i activations) {
    return _mm256_dpbusd_epi32(acc, weights, activations);
  }
};

}  // namespace

void GemvInt8Avx512Vnni(const NBitsView& w, const Int8Row& a, float* y, int64_t n0, int64_t n1) {
  GemvInt8Impl<VnniDot>(w, a, y, n0, n1);
}

}  // namespace attune::quantized
