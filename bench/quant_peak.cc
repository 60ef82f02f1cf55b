// The machine's reduced-precision peaks, beside machine_peak's fp32 FMA and
// read figures, for bench/compare_quantized.sh: register-only loops of
// vpdpbusd (u8·s8 → s32, 4 products per lane) and vdpbf16ps (bf16 pairs →
// fp32) on zmm, 12 independent chains, one thread and N threads (OpenMP).
// Prints one JSON object; null for an instruction the CPU lacks.
//
// usage: quant_peak [--threads N] [--seconds S]
#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench/quant_peak_kernels.h"
#include "nlohmann/json.hpp"

namespace attune::bench {
namespace {

using LoopFn = float (*)(int64_t);

// Best of 8 runs of ~`seconds` each, in G operations per second (a multiply-add is 2).
double Rate(LoopFn loop, double ops_per_round, int threads, double seconds) {
  int64_t iterations = 1 << 16;
  for (;;) {  // size the run
    const auto t0 = std::chrono::steady_clock::now();
    volatile float sink = loop(iterations);
    (void)sink;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > seconds / 4) {
      iterations = static_cast<int64_t>(iterations * seconds / s);
      break;
    }
    iterations *= 2;
  }
  double best = 0;
  for (int run = 0; run < 8; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
      volatile float sink = loop(iterations);
      (void)sink;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, ops_per_round * iterations * threads / s / 1e9);
  }
  return best;
}

}  // namespace
}  // namespace attune::bench

int main(int argc, char** argv) {
  using namespace attune::bench;
  int threads = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  double seconds = 0.05;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: quant_peak [--threads N] [--seconds S]\n");
      return 2;
    }
  }
  if (threads < 1 || threads > 1024 || !(seconds > 0 && seconds <= 60)) {
    std::fprintf(stderr, "error: --threads 1..1024, --seconds (0, 60]\n");
    return 2;
  }
  __builtin_cpu_init();
  const bool vnni = __builtin_cpu_supports("avx512vnni");
  const bool bf16 = __builtin_cpu_supports("avx512bf16");
  // Per round: 12 chains · 16 lanes · (4 products for vpdpbusd, 2 for vdpbf16ps) · 2 ops.
  const double vnni_ops = kQuantChains * 16.0 * 4 * 2, bf16_ops = kQuantChains * 16.0 * 2 * 2;
  nlohmann::json j = {{"threads", threads}};
  j["vnni_int8_gops_1t"] = vnni ? nlohmann::json(Rate(VnniChainsZmm, vnni_ops, 1, seconds)) : nlohmann::json(nullptr);
  j["vnni_int8_gops_nt"] =
      vnni ? nlohmann::json(Rate(VnniChainsZmm, vnni_ops, threads, seconds)) : nlohmann::json(nullptr);
  j["bf16_gflops_1t"] = bf16 ? nlohmann::json(Rate(Bf16ChainsZmm, bf16_ops, 1, seconds)) : nlohmann::json(nullptr);
  j["bf16_gflops_nt"] =
      bf16 ? nlohmann::json(Rate(Bf16ChainsZmm, bf16_ops, threads, seconds)) : nlohmann::json(nullptr);
  std::printf("%s\n", j.dump().c_str());
  return 0;
}
