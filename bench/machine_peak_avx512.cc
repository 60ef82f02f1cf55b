// Built with the AVX-512 flags (bench/CMakeLists.txt); runs only where CPUID and XGETBV report AVX-512.
#include <immintrin.h>

#include "bench/machine_peak_kernels.h"

namespace attune::bench {

float FmaChainsZmm(int64_t iterations) {
  const __m512 b = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(0.001f);
  __m512 a0 = _mm512_set1_ps(0.10f), a1 = _mm512_set1_ps(0.11f), a2 = _mm512_set1_ps(0.12f);
  __m512 a3 = _mm512_set1_ps(0.13f), a4 = _mm512_set1_ps(0.14f), a5 = _mm512_set1_ps(0.15f);
  __m512 a6 = _mm512_set1_ps(0.16f), a7 = _mm512_set1_ps(0.17f), a8 = _mm512_set1_ps(0.18f);
  __m512 a9 = _mm512_set1_ps(0.19f), a10 = _mm512_set1_ps(0.20f), a11 = _mm512_set1_ps(0.21f);
  for (int64_t i = 0; i < iterations; ++i) {
    a0 = _mm512_fmadd_ps(a0, b, c);
    a1 = _mm512_fmadd_ps(a1, b, c);
    a2 = _mm512_fmadd_ps(a2, b, c);
    a3 = _mm512_fmadd_ps(a3, b, c);
    a4 = _mm512_fmadd_ps(a4, b, c);
    a5 = _mm512_fmadd_ps(a5, b, c);
    a6 = _mm512_fmadd_ps(a6, b, c);
    a7 = _mm512_fmadd_ps(a7, b, c);
    a8 = _mm512_fmadd_ps(a8, b, c);
    a9 = _mm512_fmadd_ps(a9, b, c);
    a10 = _mm512_fmadd_ps(a10, b, c);
    a11 = _mm512_fmadd_ps(a11, b, c);
  }
  const __m512 s = _mm512_add_ps(
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                    _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7))),
      _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  return _mm512_reduce_add_ps(s);
}

}  // namespace attune::bench
