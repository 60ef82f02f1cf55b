// The loops machine_peak times, one file per instruction set (each compiled
// with its own -m flags, called only when the CPU has that set).
#pragma once

#include <cstddef>
#include <cstdint>

namespace attune::bench {

/// `iterations` rounds of 12 independent FMA chains (acc = acc·b + c), all in
/// registers: 12 · 16 lanes · 2 = 384 flop per round (zmm) or 192 (ymm).
/// Returns a value of the accumulators so that the loop cannot be dropped.
float FmaChainsZmm(int64_t iterations);
float FmaChainsYmm(int64_t iterations);
inline constexpr int kFmaChains = 12;

/// The sum of `n` floats, read with 256-bit loads as four streams (the four
/// quarters of the buffer side by side), one accumulator each.
float ReadSumYmm(const float* data, size_t n);

}  // namespace attune::bench
