// What the CPU (and the OS, for the wider register state) supports, detected
// once, and which SIMD level kernels with per-ISA variants should use.
#pragma once

#include <optional>
#include <string>

namespace attune {

struct CpuFeatures {
  bool avx2 = false;     // AVX2 + FMA + F16C with YMM state enabled by the OS
  bool avx512 = false;   // AVX-512 F/BW/VL/DQ with ZMM and opmask state enabled
};

/// Detected from CPUID and XGETBV on first use.
const CpuFeatures& GetCpuFeatures();

/// Instruction-set levels of kernels with per-ISA variants, best last.
enum class Isa { kGeneric = 0, kAvx2 = 1, kAvx512 = 2 };

const char* IsaName(Isa isa);
/// "generic" / "avx2" / "avx512" (case-insensitive) to an Isa.
std::optional<Isa> ParseIsa(const std::string& name);

/// Whether this CPU can run kernels built for `isa`.
bool IsaSupported(Isa isa);

/// The level kernels should use: the forced one (SetForcedIsa, else the
/// ATTUNE_ISA environment variable read once at start-up) when this CPU
/// supports it, else the best one it supports. An unsupported or unknown
/// ATTUNE_ISA falls back to the best supported level.
Isa ActiveIsa();

/// Forces a level (tests); std::nullopt returns to ATTUNE_ISA / the best.
/// Not thread-safe against kernels running concurrently.
void SetForcedIsa(std::optional<Isa> isa);

}  // namespace attune
