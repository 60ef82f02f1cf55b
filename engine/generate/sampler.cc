#include "engine/generate/sampler.h"

#include <algorithm>
#include <cmath>

namespace attune {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Xoshiro256::Xoshiro256(uint64_t seed) {
  for (uint64_t& s : s_) s = SplitMix64(seed);
}

uint64_t Xoshiro256::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

double Xoshiro256::Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

int64_t ArgMax(std::span<const float> logits) {
  int64_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = static_cast<int64_t>(i);
  return best;
}

int64_t Sampler::Next(std::span<const float> logits) {
  if (config_.greedy || config_.temperature <= 0.0f || logits.size() <= 1) return ArgMax(logits);
  // Candidates by descending logit (ties by id, so the order is total and the
  // result cannot depend on the sort's stability).
  scratch_.clear();
  for (size_t i = 0; i < logits.size(); ++i) scratch_.emplace_back(logits[i], static_cast<int64_t>(i));
  auto by_logit = [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  size_t keep = scratch_.size();
  if (config_.top_k > 0 && static_cast<size_t>(config_.top_k) < keep) {
    keep = static_cast<size_t>(config_.top_k);
    std::partial_sort(scratch_.begin(), scratch_.begin() + keep, scratch_.end(), by_logit);
    scratch_.resize(keep);
  } else {
    std::sort(scratch_.begin(), scratch_.end(), by_logit);
  }
  // Softmax at the temperature in double, from the largest logit down.
  std::vector<double> weights(keep);
  const double top = scratch_[0].first;
  double total = 0;
  for (size_t i = 0; i < keep; ++i) {
    weights[i] = std::exp((scratch_[i].first - top) / config_.temperature);
    total += weights[i];
  }
  // Nucleus: the smallest prefix whose mass reaches top_p (at least one token).
  if (config_.top_p < 1.0f) {
    double mass = 0;
    size_t n = 0;
    while (n < keep) {
      mass += weights[n] / total;
      ++n;
      if (mass >= config_.top_p) break;
    }
    keep = n;
    total = 0;
    for (size_t i = 0; i < keep; ++i) total += weights[i];
  }
  const double r = rng_.Uniform() * total;
  double acc = 0;
  for (size_t i = 0; i < keep; ++i) {
    acc += weights[i];
    if (r < acc) return scratch_[i].second;
  }
  return scratch_[keep - 1].second;
}

}  // namespace attune
