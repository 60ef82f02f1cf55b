// The machine's own limits, to judge a benchmark against: fp32 FMA throughput
// (12 independent register-only FMA chains, zmm where the CPU has AVX-512 and
// ymm with AVX2 + FMA) and read bandwidth (a streaming sum over a buffer far
// larger than the last-level cache, each thread reading its share as four
// distant streams with AVX2), on 1 thread and on N threads (OpenMP).
// Prints one JSON object; bench/compare_model.sh prints it before its tables.
//
// usage: machine_peak [--threads N] [--buffer-mib MIB] [--seconds S]
//   --threads N       the N of the N-thread figures (default: all online CPUs)
//   --buffer-mib MIB  the read buffer (default 1024)
//   --seconds S       the time of one FMA run (default 0.05); every figure is the best of
//                     8 runs (FMA) or 5 passes over the buffer (read), so that a machine
//                     shared with other work still shows its peak
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "bench/machine_peak_kernels.h"
#include "nlohmann/json.hpp"
#include "ops/common/cpu_features.h"

namespace attune::bench {
namespace {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

volatile float g_sink;  // keeps every result alive

using FmaLoop = float (*)(int64_t);

// Wall seconds for every one of `threads` threads to run `iterations` rounds;
// `ran` gets the number of threads OpenMP gave.
double TimeFma(FmaLoop loop, int64_t iterations, int threads, int* ran) {
  const double start = Now();
#pragma omp parallel num_threads(threads)
  {
    const float r = loop(iterations);
#pragma omp critical
    g_sink = g_sink + r;
#pragma omp single nowait
    *ran = omp_get_num_threads();
  }
  return Now() - start;
}

// GFLOP/s of `loop` on `threads` threads, best of 8 runs of about `seconds`
// each; `flop_per_round` is 2 · lanes · chains.
double FmaGflops(FmaLoop loop, double flop_per_round, int threads, double seconds) {
  int ran = 0;
  int64_t iterations = 1 << 16;
  double t = TimeFma(loop, iterations, threads, &ran);
  while (t < seconds / 4) {
    iterations *= 2;
    t = TimeFma(loop, iterations, threads, &ran);
  }
  iterations = static_cast<int64_t>(iterations * seconds / t) + 1;
  double best = 0;
  for (int rep = 0; rep < 8; ++rep) {
    const double s = TimeFma(loop, iterations, threads, &ran);
    best = std::max(best, flop_per_round * static_cast<double>(iterations) * ran / s / 1e9);
  }
  return best;
}

float ReadSumPortable(const float* data, size_t n) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) s0 += data[i], s1 += data[i + 1], s2 += data[i + 2], s3 += data[i + 3];
  for (; i < n; ++i) s0 += data[i];
  return (s0 + s1) + (s2 + s3);
}

// GB/s (10^9 bytes) of summing the whole buffer on `threads` threads, each a
// contiguous share; best of 5 passes after one untimed pass.
double ReadGbs(const float* data, size_t n, int threads, bool avx2) {
  auto pass = [&] {
    const double start = Now();
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const size_t begin = n * t / nt, end = n * (t + 1) / nt;
      const float r = avx2 ? ReadSumYmm(data + begin, end - begin) : ReadSumPortable(data + begin, end - begin);
#pragma omp critical
      g_sink = g_sink + r;
    }
    return Now() - start;
  };
  pass();
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) best = std::max(best, n * sizeof(float) / pass() / 1e9);
  return best;
}

int Main(int argc, char** argv) {
  int threads = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  long buffer_mib = 1024;
  double seconds = 0.05;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--threads") == 0 && has_value) threads = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--buffer-mib") == 0 && has_value) buffer_mib = std::atol(argv[++i]);
    else if (std::strcmp(argv[i], "--seconds") == 0 && has_value) seconds = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: machine_peak [--threads N] [--buffer-mib MIB] [--seconds S]\n");
      return 2;
    }
  }
  if (threads < 1 || threads > 1024 || buffer_mib < 1 || buffer_mib > (1 << 20) || !(seconds > 0 && seconds <= 60)) {
    std::fprintf(stderr, "error: --threads 1..1024, --buffer-mib 1..1048576, --seconds (0, 60]\n");
    return 2;
  }
  const CpuFeatures& cpu = GetCpuFeatures();
  nlohmann::json j = {{"threads", threads}, {"avx512", cpu.avx512}, {"avx2", cpu.avx2}, {"fma_chains", kFmaChains},
                      {"buffer_mib", buffer_mib}};
  for (const char* isa : {"zmm", "ymm"}) {
    const bool zmm = std::strcmp(isa, "zmm") == 0;
    const bool have = zmm ? cpu.avx512 : cpu.avx2;
    const FmaLoop loop = zmm ? FmaChainsZmm : FmaChainsYmm;
    const double flop_per_round = 2.0 * (zmm ? 16 : 8) * kFmaChains;
    const std::string key = std::string("fma_") + isa + "_gflops_";
    j[key + "1t"] = have ? nlohmann::json(FmaGflops(loop, flop_per_round, 1, seconds)) : nlohmann::json(nullptr);
    j[key + "nt"] = have ? nlohmann::json(FmaGflops(loop, flop_per_round, threads, seconds)) : nlohmann::json(nullptr);
  }
  const size_t n = static_cast<size_t>(buffer_mib) << 18;  // floats
  std::unique_ptr<float[]> buffer(new (std::nothrow) float[n]);
  if (buffer == nullptr) {
    std::fprintf(stderr, "error: cannot allocate %ld MiB\n", buffer_mib);
    return 1;
  }
  // First touch by the threads that read it, with values that keep the sum finite.
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t i = 0; i < n; ++i) buffer[i] = static_cast<float>(i & 7) * 0.125f;
  j["read_gbs_1t"] = ReadGbs(buffer.get(), n, 1, cpu.avx2);
  j["read_gbs_nt"] = ReadGbs(buffer.get(), n, threads, cpu.avx2);
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace
}  // namespace attune::bench

int main(int argc, char** argv) { return attune::bench::Main(argc, argv); }
