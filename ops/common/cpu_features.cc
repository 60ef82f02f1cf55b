#include "ops/common/cpu_features.h"

#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define ATTUNE_X86 1
#endif

namespace attune {
namespace {

#ifdef ATTUNE_X86
uint64_t ReadXcr0() {
  uint32_t eax = 0, edx = 0;
  // xgetbv with ecx = 0; only valid when CPUID reports OSXSAVE.
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}
#endif

CpuFeatures Detect() {
  CpuFeatures f;
#ifdef ATTUNE_X86
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0 || eax < 7) return f;
  __cpuid(1, eax, ebx, ecx, edx);
  const bool osxsave = ecx & (1u << 27);
  const bool fma = ecx & (1u << 12);
  const bool f16c = ecx & (1u << 29);
  const bool avx = ecx & (1u << 28);
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = ReadXcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;           // SSE + AVX
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;         // + opmask, ZMM_Hi256, Hi16_ZMM
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const bool avx2 = ebx & (1u << 5);
  const bool avx512f = ebx & (1u << 16);
  const bool avx512dq = ebx & (1u << 17);
  const bool avx512bw = ebx & (1u << 30);
  const bool avx512vl = ebx & (1u << 31);
  f.avx2 = ymm_state && avx2 && fma && f16c;
  f.avx512 = f.avx2 && zmm_state && avx512f && avx512dq && avx512bw && avx512vl;
#endif
  return f;
}

Isa BestIsa() {
  const CpuFeatures& f = GetCpuFeatures();
  if (f.avx512) return Isa::kAvx512;
  if (f.avx2) return Isa::kAvx2;
  return Isa::kGeneric;
}

Isa IsaFromEnvironment() {
  const char* env = std::getenv("ATTUNE_ISA");
  if (env != nullptr) {
    std::optional<Isa> isa = ParseIsa(env);
    if (isa && IsaSupported(*isa)) return *isa;
  }
  return BestIsa();
}

// -1: not forced; otherwise an Isa value.
std::atomic<int> g_forced{-1};

}  // namespace

const CpuFeatures& GetCpuFeatures() {
  static const CpuFeatures features = Detect();
  return features;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx2: return "avx2";
    case Isa::kGeneric: return "generic";
  }
  return "generic";
}

std::optional<Isa> ParseIsa(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "avx512") return Isa::kAvx512;
  if (lower == "avx2") return Isa::kAvx2;
  if (lower == "generic") return Isa::kGeneric;
  return std::nullopt;
}

bool IsaSupported(Isa isa) {
  const CpuFeatures& f = GetCpuFeatures();
  switch (isa) {
    case Isa::kAvx512: return f.avx512;
    case Isa::kAvx2: return f.avx2;
    case Isa::kGeneric: return true;
  }
  return false;
}

Isa ActiveIsa() {
  static const Isa from_environment = IsaFromEnvironment();
  const int forced = g_forced.load(std::memory_order_relaxed);
  if (forced >= 0 && IsaSupported(static_cast<Isa>(forced))) return static_cast<Isa>(forced);
  return from_environment;
}

void SetForcedIsa(std::optional<Isa> isa) {
  g_forced.store(isa ? static_cast<int>(*isa) : -1, std::memory_order_relaxed);
}

}  // namespace attune
