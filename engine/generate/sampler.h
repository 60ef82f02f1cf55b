// Choosing the next token from a row of logits: argmax, or sampling with
// temperature, top-k and top-p from a PRNG of our own, so that a seed gives the
// same tokens on every platform and standard library.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace attune {

/// xoshiro256** seeded through splitmix64 (both public-domain algorithms by
/// Blackman and Vigna); the standard library's engines are portable but its
/// distributions are not, so the uniform draw is ours too.
class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed);
  uint64_t Next();
  /// Uniform in [0, 1) with 53 random bits.
  double Uniform();

 private:
  uint64_t s_[4];
};

struct SamplerConfig {
  bool greedy = true;
  float temperature = 1.0f;
  int64_t top_k = 0;   // 0 = all
  float top_p = 1.0f;  // 1 = all
};

class Sampler {
 public:
  Sampler(const SamplerConfig& config, uint64_t seed) : config_(config), rng_(seed) {}
  /// The chosen token id for one row of logits.
  int64_t Next(std::span<const float> logits);

 private:
  SamplerConfig config_;
  Xoshiro256 rng_;
  std::vector<std::pair<float, int64_t>> scratch_;  // reused across calls
};

/// The index of the largest value (the first on ties, as torch.argmax).
int64_t ArgMax(std::span<const float> logits);

}  // namespace attune
