#include <immintrin.h>

#include "bench/quant_peak_kernels.h"

namespace attune::bench {

float VnniChainsZmm(int64_t iterations) {
  __m512i acc[kQuantChains];
  for (int c = 0; c < kQuantChains; ++c) acc[c] = _mm512_set1_epi32(c);
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kQuantChains; ++c) acc[c] = _mm512_dpbusd_epi32(acc[c], a, b);
  __m512i sum = acc[0];
  for (int c = 1; c < kQuantChains; ++c) sum = _mm512_add_epi32(sum, acc[c]);
  return static_cast<float>(_mm512_reduce_add_epi32(sum));
}

}  // namespace attune::bench
