// Fused attention throughput: B=1, H=12, D=64, causal self-attention, per
// backend, sequence length and thread count. Counters: GFLOP/s of unmasked
// work (4·H·D·T(T+1)/2 FLOPs per run) and its share of this machine's fp32
// FMA peak (117 GFLOP/s per core, see docs/KERNELS.md).
//
//   attention_bench --benchmark_filter=flash_avx512 --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <time.h>

#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/attention/kernels/attention_args.h"
#include "ops/attention/kernels/flash_attention.h"
#include "ops/common/cpu_features.h"

namespace attune::attention {
namespace {

constexpr double kPeakPerThread = 117e9;
constexpr int64_t kHeads = 12, kDim = 64;

enum Backend { kFlashAvx512, kFlashAvx2, kFlashGeneric, kFlashSgemm, kOneDnn, kAuto, kReference };
const char* const kBackendNames[] = {"flash_avx512", "flash_avx2", "flash_generic", "flash_sgemm",
                                     "onednn",       "auto",       "reference"};

struct Inputs {
  std::vector<float> q, k, v, y;
  AttentionArgs args;
  explicit Inputs(int64_t t, int threads) : q(kHeads * t * kDim), k(q.size()), v(q.size()), y(q.size()) {
    std::mt19937 gen(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (auto* buf : {&q, &k, &v})
      for (float& x : *buf) x = dist(gen);
    // B,T,H·D layout (as a fused QKV projection produces), read in place.
    auto view = [&](const std::vector<float>& b) {
      return StridedView{b.data(), t * kHeads * kDim, kDim, kHeads * kDim};
    };
    args.batch = 1;
    args.q_heads = args.kv_heads = kHeads;
    args.q_len = args.kv_len = t;
    args.head_dim = args.v_head_dim = kDim;
    args.q = view(q);
    args.k = view(k);
    args.v = view(v);
    args.y = y.data();
    args.y_stride_batch = t * kHeads * kDim;
    args.y_stride_head = kDim;
    args.y_stride_seq = kHeads * kDim;
    args.scale = 1.0f / std::sqrt(static_cast<float>(kDim));
    args.causal = true;
    args.threads = threads;
  }
};

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

absl::Status RunBackend(Backend backend, const AttentionArgs& args) {
  switch (backend) {
    case kFlashAvx512:
    case kFlashAvx2:
    case kFlashGeneric:
    case kFlashSgemm:
      return RunFlashAttention(args, backend == kFlashSgemm ? FlashGemm::kOneDnn : FlashGemm::kNative);
    case kOneDnn: return RunAttention(args, AttentionBackend::kOneDnn);
    case kAuto: return RunAttention(args, AttentionBackend::kAuto);
    case kReference: return RunAttention(args, AttentionBackend::kReference);
  }
  return absl::OkStatus();
}

void BM_Attention(benchmark::State& state) {
  const auto backend = static_cast<Backend>(state.range(0));
  const int64_t t = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  const Isa isa = backend == kFlashAvx2 ? Isa::kAvx2 : backend == kFlashGeneric ? Isa::kGeneric : Isa::kAvx512;
  if (!IsaSupported(isa)) {
    state.SkipWithError("ISA not supported on this CPU");
    return;
  }
  SetForcedIsa(isa);
  Inputs in(t, threads);
  if (!RunBackend(backend, in.args).ok()) state.SkipWithError("attention failed");  // warm-up, primitive creation
  double seconds = 0.0;
  const double cpu_start = ProcessCpuSeconds();
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(RunBackend(backend, in.args));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const double cpu_seconds = ProcessCpuSeconds() - cpu_start;
  SetForcedIsa(std::nullopt);
  const double flops = 4.0 * kHeads * kDim * t * (t + 1) / 2.0;
  const double gflops = flops * static_cast<double>(state.iterations()) / seconds / 1e9;
  state.counters["GFLOPs"] = gflops;
  state.counters["pct_peak"] = 100.0 * gflops * 1e9 / (kPeakPerThread * threads);
  // Per CPU-second actually received (all threads): what the kernel reaches
  // while it runs, less sensitive to other processes on this shared machine.
  // OpenMP spin-waits count as CPU time, so this never flatters.
  state.counters["pct_peak_cpu"] = 100.0 * flops * static_cast<double>(state.iterations()) / cpu_seconds / kPeakPerThread;
  state.SetLabel(kBackendNames[backend]);
}

void Args(benchmark::internal::Benchmark* b) {
  for (int backend : {kFlashAvx512, kFlashAvx2, kFlashSgemm, kOneDnn, kFlashGeneric}) {
    for (int64_t t : {128, 512, 1024, 2048, 4096}) {
      if (backend == kFlashGeneric && t > 1024) continue;
      for (int threads : {1, 2}) b->Args({backend, t, threads});
    }
  }
}

BENCHMARK(BM_Attention)->Apply(Args)->ArgNames({"backend", "T", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attune::attention

BENCHMARK_MAIN();
