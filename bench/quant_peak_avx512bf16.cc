#include <immintrin.h>

#include "bench/quant_peak_kernels.h"

namespace attune::bench {

float Bf16ChainsZmm(int64_t iterations) {
  __m512 acc[kQuantChains];
  for (int c = 0; c < kQuantChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(0.25f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(-1e-3f));
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kQuantChains; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
  __m512 sum = acc[0];
  for (int c = 1; c < kQuantChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  return _mm512_reduce_add_ps(sum);
}

}  // namespace attune::bench
