// MatMul through the kernel registry: constant weights packed once at prepare
// time versus the per-call paths. 1024×768×768 is the size KERNELS.md quotes
// for oneDNN sgemm; the small row counts are decoding-style products.
//
//   ./matmul_bench --benchmark_filter=M:1024 --benchmark_repetitions=5
// The GFLOP counter is a rate: "GFLOP=113/s" reads 113 GFLOP/s.
#include <memory>
#include <optional>
#include <vector>

#include "benchmark/benchmark.h"
#include "ops/kernel.h"
#include "ops/matmul/matmul_reference.h"
#include "ops/matmul/matmul_shape.h"
#include "ops/matmul/onednn_matmul.h"
#include "ops/registry.h"

namespace attune {
namespace {

constexpr int64_t kK = 768, kN = 768;

Tensor Filled(std::vector<int64_t> shape, float seed) {
  Tensor t = *Tensor::Create(ElementType::kFloat32, std::move(shape));
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<float>((i * 7919 + 13) % 1000) / 1000.0f - seed;
  return t;
}

struct Setup {
  Tensor a, b;
  Attributes attributes;
  ExecOptions options;
  KernelInfo info;

  Setup(int64_t m, int threads, bool constant_b) : a(Filled({m, kK}, 0.5f)), b(Filled({kK, kN}, 0.25f)) {
    options.threads = threads;
    info.node_name = "bench";
    info.op_type = "MatMul";
    info.opset = 13;
    info.attributes = &attributes;
    info.input_present = {true, true};
    info.constant_inputs = {nullptr, constant_b ? &b : nullptr};
    info.input_types = {ElementType::kFloat32, ElementType::kFloat32};
    info.num_outputs = 1;
    info.options = &options;
  }
  std::unique_ptr<Kernel> Prepare() const {
    auto entry = DefaultKernelRegistry().Find("", "MatMul", 13);
    return *(*entry)->factory(info);
  }
  void Run(const Kernel& kernel, benchmark::State& state) const {
    std::vector<Tensor> outputs(1);
    KernelContext ctx({&a, &b}, &outputs, {true}, &options);
    absl::Status status = kernel.Run(ctx);
    if (!status.ok()) state.SkipWithError(std::string(status.message()).c_str());
    benchmark::DoNotOptimize(outputs[0].raw_data());
  }
};

void SetCounters(benchmark::State& state, int64_t m) {
  state.counters["GFLOP"] =
      benchmark::Counter(2.0 * m * kK * kN / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

// B constant: weights reordered into oneDNN's blocked layout once, primitive cached per row count.
void BM_MatMulPackedConstantB(benchmark::State& state) {
  const Setup s(state.range(0), static_cast<int>(state.range(1)), /*constant_b=*/true);
  std::unique_ptr<Kernel> kernel = s.Prepare();
  s.Run(*kernel, state);  // first call creates the primitive for this row count
  for (auto _ : state) s.Run(*kernel, state);
  SetCounters(state, state.range(0));
}

// B a graph input: plain row-major weights, runtime-dims primitive (no per-call creation).
void BM_MatMulUnpackedB(benchmark::State& state) {
  const Setup s(state.range(0), static_cast<int>(state.range(1)), /*constant_b=*/false);
  std::unique_ptr<Kernel> kernel = s.Prepare();
  s.Run(*kernel, state);
  for (auto _ : state) s.Run(*kernel, state);
  SetCounters(state, state.range(0));
}

// The naive scheme: prepare (pack the weights, create the primitive) on every call.
void BM_MatMulPackPerCall(benchmark::State& state) {
  const Setup s(state.range(0), static_cast<int>(state.range(1)), /*constant_b=*/true);
  for (auto _ : state) {
    std::unique_ptr<Kernel> kernel = s.Prepare();
    s.Run(*kernel, state);
  }
  SetCounters(state, state.range(0));
}

// The plain reference loop, for scale.
void BM_MatMulReferenceLoop(benchmark::State& state) {
  const Setup s(state.range(0), static_cast<int>(state.range(1)), false);
  auto shape = *PlanMatMul("bench", s.a.shape(), s.b.shape());
  Tensor c = *Tensor::Create(ElementType::kFloat32, shape.output_shape);
  for (auto _ : state) {
    absl::Status status = ReferenceMatMul(shape, s.a, s.b, c, static_cast<int>(state.range(1)));
    benchmark::DoNotOptimize(c.raw_data());
  }
  SetCounters(state, state.range(0));
}

// A tied lm_head, logits = h · wteᵀ with wte stored [vocabulary, d_model]:
// read through strides per call (FusedMatMul's trans_b path) against packed once.
void BM_TiedHead(benchmark::State& state) {
  constexpr int64_t kVocab = 50257, kModel = 768;
  const int64_t m = state.range(0);
  const bool packed = state.range(1) != 0;
  static const Tensor* wte = new Tensor(Filled({kVocab, kModel}, 0.5f));
  const Tensor a = Filled({m, kModel}, 0.25f);
  Tensor c = *Tensor::Create(ElementType::kFloat32, {m, kVocab});
  std::unique_ptr<OneDnnConstantMatMul> weights;
  if (packed) {
    OneDnnConstantMatMul::Options options;
    options.transpose_b = true;
    weights = *OneDnnConstantMatMul::Create(wte->data<float>(), kModel, kVocab, options);
  }
  const std::vector<int64_t> a_shape{m, kModel}, b_shape{kModel, kVocab};
  MatMulShape shape = *PlanMatMul("bench", a_shape, b_shape);
  auto run = [&] {
    absl::Status status = packed ? weights->Run(a.data<float>(), m, c.data<float>(), 1)
                                 : OneDnnMatMul(shape, a.data<float>(), wte->data<float>(), c.data<float>(), 1,
                                                /*trans_a=*/false, /*trans_b=*/true);
    if (!status.ok()) state.SkipWithError(std::string(status.message()).c_str());
  };
  run();
  for (auto _ : state) run();
  state.counters["GFLOP"] =
      benchmark::Counter(2.0 * m * kModel * kVocab / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_TiedHead)->Args({128, 0})->Args({128, 1})->Args({512, 0})->Args({512, 1})->ArgNames({"M", "packed"})
    ->UseRealTime()->Unit(benchmark::kMillisecond);

// Prefill projections of GPT-2 (K 768; N 2304 for QKV, 3072 for the MLP up)
// and the LLaMA-shaped model (2048 x 5632 gate/up, 5632 x 2048 down, 2048 x
// 2048 q/o) on constant weights used where they are (in_place:1, what the
// MatMul and Gemm kernels do; rows that share L1 sets are reordered per
// product, onednn_matmul.cc) against oneDNN's packed copy (in_place:0).
void BM_ConstantWeightsLayout(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const bool in_place = state.range(3) != 0;
  const Tensor w = Filled({k, n}, 0.5f), a = Filled({m, k}, 0.25f);
  Tensor c = *Tensor::Create(ElementType::kFloat32, {m, n});
  OneDnnConstantMatMul::Options options;
  options.in_place = in_place;
  std::unique_ptr<OneDnnConstantMatMul> weights = *OneDnnConstantMatMul::Create(w.data<float>(), k, n, options);
  auto run = [&] {
    absl::Status status = weights->Run(a.data<float>(), m, c.data<float>(), 1);
    if (!status.ok()) state.SkipWithError(std::string(status.message()).c_str());
  };
  run();
  for (auto _ : state) run();
  state.counters["GFLOP"] = benchmark::Counter(2.0 * m * k * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
void LayoutSizes(benchmark::internal::Benchmark* b) {
  for (auto [k, n] : {std::pair<int64_t, int64_t>{768, 2304}, {768, 3072}, {2048, 5632}, {5632, 2048}, {2048, 2048}})
    for (int in_place : {0, 1}) b->Args({128, k, n, in_place});
  b->ArgNames({"M", "K", "N", "in_place"})->UseRealTime()->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_ConstantWeightsLayout)->Apply(LayoutSizes);

void Sizes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2})
    for (int64_t m : {1024, 128, 4, 1}) b->Args({m, threads});
  b->ArgNames({"M", "threads"})->UseRealTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_MatMulPackedConstantB)->Apply(Sizes);
BENCHMARK(BM_MatMulUnpackedB)->Apply(Sizes);
BENCHMARK(BM_MatMulPackPerCall)->Apply(Sizes);
BENCHMARK(BM_MatMulReferenceLoop)->Args({1024, 1})->Args({1024, 2})->ArgNames({"M", "threads"})->UseRealTime()
    ->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace attune

BENCHMARK_MAIN();
