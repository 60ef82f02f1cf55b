#include "ops/quantize/dynamic_quantize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/common/parallel.h"
#include "ops/quantize/quantize_params.h"

namespace attune::quantize {

DynamicQuantParams ComputeDynamicQuantParams(const float* x, int64_t n, int threads) {
  // Chunks of a fixed size, so the partial results do not depend on the team
  // (min and max are exact whatever the order anyway).
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<float> mins(static_cast<size_t>(chunks), 0.0f), maxs(static_cast<size_t>(chunks), 0.0f);
  ParallelForRange(chunks, 4, threads, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      float lo = 0.0f, hi = 0.0f;  // the range always holds zero
      const int64_t stop = std::min(n, (c + 1) * kChunk);
      for (int64_t i = c * kChunk; i < stop; ++i) {
        lo = x[i] < lo ? x[i] : lo;  // a NaN compares false and is skipped
        hi = x[i] > hi ? x[i] : hi;
      }
      mins[c] = lo;
      maxs[c] = hi;
    }
  });
  float lo = 0.0f, hi = 0.0f;
  for (int64_t c = 0; c < chunks; ++c) {
    lo = std::min(lo, mins[c]);
    hi = std::max(hi, maxs[c]);
  }
  DynamicQuantParams p;
  p.scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  float initial = 0.0f - lo / p.scale;
  if (std::isnan(initial)) initial = 0.0f;  // an infinite range
  p.zero_point = static_cast<uint8_t>(std::nearbyint(std::clamp(initial, 0.0f, 255.0f)));
  return p;
}

void QuantizeToUint8(const float* x, int64_t n, DynamicQuantParams p, uint8_t* out, int threads) {
  const IntRange range{0, 255};
  const int32_t zp = p.zero_point;
  ParallelForRange(n, kCheapOpGrain, threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float q = x[i] / p.scale;
      out[i] = std::isnan(q) ? 0 : static_cast<uint8_t>(QuantizeValue(q, zp, range));
    }
  });
}

}  // namespace attune::quantize
