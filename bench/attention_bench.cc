// Fused attention throughput.
//
// BM_Attention: B=1, H=12, D=64, causal self-attention, per backend,
// sequence length and thread count. Counters: GFLOP/s of unmasked work
// (4·H·D·T(T+1)/2 FLOPs per run), its share of the fp32 FMA peak quoted in
// docs/KERNELS.md (117 GFLOP/s per core), and the same share per CPU-second
// actually received (pct_peak_cpu), which is what survives on this shared,
// often overloaded machine.
//
// BM_AttentionShape: the shapes behind the dispatch rule (non-causal short
// sequences, decode against a KV cache, GQA), flash vs oneDNN; decode
// reports GB/s of K and V streamed.
//
//   attention_bench --benchmark_filter=BM_Attention/ --benchmark_repetitions=5
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
constexpr int64_t kDim = 64;

enum Backend { kFlashAvx512, kFlashAvx2, kFlashGeneric, kOneDnn, kAuto, kReference };
const char* const kBackendNames[] = {"flash_avx512", "flash_avx2", "flash_generic", "onednn", "auto", "reference"};

struct Shape {
  int64_t batch = 1, heads = 12, kv_heads = 12, q_len = 1, kv_len = 1;
  bool causal = true;
};

/// Inputs in the B,T,H·D layout a fused QKV projection produces, read in place.
struct Inputs {
  std::vector<float> q, k, v, y;
  AttentionArgs args;
  Inputs(const Shape& s, int threads)
      : q(s.batch * s.q_len * s.heads * kDim),
        k(s.batch * s.kv_len * s.kv_heads * kDim),
        v(k.size()),
        y(q.size()) {
    std::mt19937 gen(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (auto* buf : {&q, &k, &v})
      for (float& x : *buf) x = dist(gen);
    auto view = [&](const std::vector<float>& b, int64_t len, int64_t heads) {
      return StridedView{b.data(), len * heads * kDim, kDim, heads * kDim};
    };
    args.batch = s.batch;
    args.q_heads = s.heads;
    args.kv_heads = s.kv_heads;
    args.q_len = s.q_len;
    args.kv_len = s.kv_len;
    args.head_dim = args.v_head_dim = kDim;
    args.q = view(q, s.q_len, s.heads);
    args.k = view(k, s.kv_len, s.kv_heads);
    args.v = view(v, s.kv_len, s.kv_heads);
    args.y = y.data();
    args.y_stride_batch = s.q_len * s.heads * kDim;
    args.y_stride_head = kDim;
    args.y_stride_seq = s.heads * kDim;
    args.scale = 1.0f / std::sqrt(static_cast<float>(kDim));
    args.causal = s.causal;
    args.causal_offset = s.kv_len - s.q_len;
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
      return RunFlashAttention(args);
    case kOneDnn: return RunAttention(args, AttentionBackend::kOneDnn);
    case kAuto: return RunAttention(args, AttentionBackend::kAuto);
    case kReference: return RunAttention(args, AttentionBackend::kReference);
  }
  return absl::OkStatus();
}

/// Runs the benchmark loop; returns (wall seconds, process CPU seconds).
std::pair<double, double> Measure(benchmark::State& state, Backend backend, const Shape& shape, int threads) {
  const Isa isa = backend == kFlashAvx2 ? Isa::kAvx2 : backend == kFlashGeneric ? Isa::kGeneric : Isa::kAvx512;
  if (!IsaSupported(isa)) {
    state.SkipWithError("ISA not supported on this CPU");
    return {1.0, 1.0};
  }
  SetForcedIsa(isa);
  Inputs in(shape, threads);
  if (!RunBackend(backend, in.args).ok()) state.SkipWithError("attention failed");  // warm-up, primitive creation
  double seconds = 0.0;
  const double cpu_start = ProcessCpuSeconds();
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(RunBackend(backend, in.args));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  SetForcedIsa(std::nullopt);
  state.SetLabel(kBackendNames[backend]);
  return {seconds, ProcessCpuSeconds() - cpu_start};
}

void BM_Attention(benchmark::State& state) {
  const auto backend = static_cast<Backend>(state.range(0));
  const int64_t t = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  Shape shape;
  shape.q_len = shape.kv_len = t;
  const auto [seconds, cpu_seconds] = Measure(state, backend, shape, threads);
  const double flops = 4.0 * shape.heads * kDim * t * (t + 1) / 2.0 * static_cast<double>(state.iterations());
  state.counters["GFLOPs"] = flops / seconds / 1e9;
  state.counters["pct_peak"] = 100.0 * flops / seconds / (kPeakPerThread * threads);
  // Per CPU-second actually received (all threads; OpenMP spin-waits count
  // too, so this never flatters).
  state.counters["pct_peak_cpu"] = 100.0 * flops / cpu_seconds / kPeakPerThread;
}

void CausalArgs(benchmark::internal::Benchmark* b) {
  for (int backend : {kFlashAvx512, kFlashAvx2, kOneDnn, kFlashGeneric}) {
    for (int64_t t : {128, 512, 1024, 2048, 4096}) {
      if (backend == kFlashGeneric && t > 1024) continue;
      for (int threads : {1, 2}) b->Args({backend, t, threads});
    }
  }
}
BENCHMARK(BM_Attention)->Apply(CausalArgs)->ArgNames({"backend", "T", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);

// Args: backend, batch, heads, kv_heads, q_len, kv_len, causal, threads.
void BM_AttentionShape(benchmark::State& state) {
  const auto backend = static_cast<Backend>(state.range(0));
  Shape s{state.range(1), state.range(2), state.range(3), state.range(4), state.range(5), state.range(6) != 0};
  const int threads = static_cast<int>(state.range(7));
  const auto [seconds, cpu_seconds] = Measure(state, backend, s, threads);
  const double it = static_cast<double>(state.iterations());
  double pairs = 0.0;  // visible (query, key) pairs per head
  for (int64_t i = 0; i < s.q_len; ++i) pairs += s.causal ? std::min(s.kv_len, s.kv_len - s.q_len + i + 1) : s.kv_len;
  const double flops = 4.0 * kDim * s.batch * s.heads * pairs * it;
  state.counters["GFLOPs"] = flops / seconds / 1e9;
  state.counters["pct_peak_cpu"] = 100.0 * flops / cpu_seconds / kPeakPerThread;
  const double kv_bytes = 2.0 * 4.0 * kDim * s.batch * s.kv_heads * s.kv_len * it;
  state.counters["KV_GBps"] = kv_bytes / seconds / 1e9;
  state.counters["us"] = 1e6 * seconds / it;
}

void ShapeArgs(benchmark::internal::Benchmark* b) {
  for (int backend : {kFlashAvx512, kOneDnn}) {
    for (int threads : {1, 2}) {
      for (int64_t t : {32, 64, 128, 256, 512}) b->Args({backend, 1, 12, 12, t, t, 0, threads});  // encoder
      for (int64_t t : {32, 64, 128}) b->Args({backend, 8, 12, 12, t, t, 0, threads});       // batched encoder
      for (int64_t kv : {512, 2048, 8192}) {
        b->Args({backend, 1, 12, 12, 1, kv, 1, threads});  // decode, MHA
        b->Args({backend, 1, 32, 8, 1, kv, 1, threads});   // decode, GQA 4
        b->Args({backend, 4, 12, 12, 1, kv, 1, threads});  // batched decode
      }
      b->Args({backend, 1, 12, 12, 16, 1024, 1, threads});  // chunked prefill against a cache
      b->Args({backend, 1, 12, 12, 4, 2048, 1, threads});   // speculative decode
    }
  }
}
BENCHMARK(BM_AttentionShape)
    ->Apply(ShapeArgs)
    ->ArgNames({"backend", "B", "H", "Hkv", "q", "kv", "causal", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace attune::attention

BENCHMARK_MAIN();
