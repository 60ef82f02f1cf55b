// A branch-free float exp that compilers vectorise (std::exp does not
// auto-vectorise without -ffast-math): Cody-Waite range reduction by ln 2 and
// a degree-6 polynomial, within ~2 ulp of expf over the float range.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

namespace attune::reduce {
// Internal linkage on purpose: this header is compiled once per ISA
// (softmax_row_*.cc), and each copy must stay in its own object.
namespace {

inline float FastExp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;     // ln 2 split so that n * kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;      // 1.5 * 2^23: adding it rounds to an integer
  constexpr float kMinArg = -87.3365448f;    // below: result underflows (returned as 0)
  constexpr float kMaxArg = 88.7228394f;     // above: result overflows (returned as inf)
  const float xc = std::min(std::max(x, kMinArg), kMaxArg);
  const float t = xc * kLog2e + kRound;
  const float n = t - kRound;
  const int32_t ni = std::bit_cast<int32_t>(t) - std::bit_cast<int32_t>(kRound);
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;  // |r| <= ln2 / 2
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n in two halves: n reaches 128, one past the largest float exponent.
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  float y = p * std::bit_cast<float>((n1 + 127) << 23) * std::bit_cast<float>((n2 + 127) << 23);
  y = x < kMinArg ? 0.0f : y;
  y = x > kMaxArg ? std::numeric_limits<float>::infinity() : y;
  return x != x ? x : y;  // NaN in, NaN out
}

}  // namespace
}  // namespace attune::reduce
