// Reproducible random operands for tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace attune::testing {

/// `count` values drawn from N(0, stddev²) by a generator seeded with `seed`.
inline std::vector<float> NormalValues(int64_t count, uint32_t seed, float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(count);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace attune::testing
