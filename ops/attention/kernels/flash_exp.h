// exp2 for the softmax: round-to-nearest range reduction 2^x = 2^n · 2^f,
// f = x - n in [-1/2, 1/2] computed exactly (Cody–Waite style: the split is
// exact because n is an integer near x), and a degree-5 minimax polynomial for
// 2^f (coefficients fitted here with a Remez exchange on the relative error;
// 7.5e-8 in exact arithmetic). x is clamped below at -127, where the
// exponent field is 0 and the result is exactly 0: -inf and masked scores
// give 0, never NaN.
//
// Measured (tests/attention_kernels/exp2_test.cc: every x in [-126, 0] on a
// 2^-12 grid plus 2^20 random points of [-126, 1], against double exp2):
// max relative error 2.11e-7 (1.77 ulp of 2^-23) for AVX-512 and AVX2
// (fused multiply-adds), 2.34e-7 (1.97 ulp) for the portable code, where
// each Horner step rounds twice. The test fails above 2.5e-7.
#pragma once

#include <cstdint>
#include <cstring>

namespace attune::attention::flash_detail {

inline constexpr float kExp2C0 = 1.000000119e+00f;
inline constexpr float kExp2C1 = 6.931469440e-01f;
inline constexpr float kExp2C2 = 2.402212024e-01f;
inline constexpr float kExp2C3 = 5.550713092e-02f;
inline constexpr float kExp2C4 = 9.675540961e-03f;
inline constexpr float kExp2C5 = 1.327647245e-03f;
inline constexpr float kExp2Lowest = -127.0f;
inline constexpr float kExp2Highest = 127.0f;
/// x + kExp2Magic leaves round(x) + 127 in the low mantissa bits (|x| < 2^22),
/// so (bits << 23) is 2^round(x) as a float.
inline constexpr float kExp2Magic = 12582912.0f + 127.0f;  // 1.5 * 2^23 + bias

}  // namespace attune::attention::flash_detail
