// Deterministic test operands: small values of both signs in a pattern of
// period 23, different per salt, exact in float.
#pragma once

#include <cstdint>
#include <vector>

namespace attune::testing {

inline float PatternValue(int64_t i, int64_t salt) {
  return static_cast<float>((i * 37 + salt * 11) % 23) / 23.0f - 0.48f;
}

inline std::vector<float> PatternValues(int64_t count, int64_t salt) {
  std::vector<float> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = PatternValue(i, salt);
  return v;
}

}  // namespace attune::testing
