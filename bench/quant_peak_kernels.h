// The register-only loops quant_peak times, each in a file compiled with its
// instruction set's flags and called only where the CPU has it.
#pragma once

#include <cstdint>

namespace attune::bench {

inline constexpr int kQuantChains = 12;
/// `iterations` rounds of 12 independent vpdpbusd chains on zmm.
float VnniChainsZmm(int64_t iterations);
/// `iterations` rounds of 12 independent vdpbf16ps chains on zmm.
float Bf16ChainsZmm(int64_t iterations);

}  // namespace attune::bench
