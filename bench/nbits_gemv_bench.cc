// The int4 decode product alone: one row of A (quantized per block to int8,
// accuracy_level 4) against the packed weights of the LLaMA-shaped model of
// bench/ (4 layers of Q, K, V, O, gate, up, down at d_model 2048, SwiGLU 5632,
// and the 32 000-word head), symmetric 4-bit blocks of 32, as the
// onnxruntime-genai builder writes them: 151 MB of weights and scales, far
// beyond the caches. One thread, every variant this CPU runs; "items" are
// weights, "bytes" the packed weights and scales read. Divide its
// bytes_per_second by bench/machine_peak's read bandwidth of the same session.
//
//   ./nbits_gemv_bench --benchmark_repetitions=5
//   --benchmark_report_aggregates_only=true
#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "ops/quantized/nbits_kernels.h"

namespace attune::quantized {
namespace {

struct Matrix {
  std::vector<uint8_t> b;
  std::vector<float> scales;
  NBitsView view;
};

struct Model {
  std::vector<Matrix> matrices;
  std::vector<int8_t> q;
  std::vector<float> scale;
  std::vector<int32_t> sum;
  std::vector<float> y;
  int64_t weights = 0, bytes = 0;

  // head_only: the 32 000-word head alone; cached: a 256 × 2048 slice that
  // stays in L2 (the kernel's compute rate without the memory).
  Model(bool head_only, bool cached = false) {
    const int64_t shapes[][2] = {{2048, 2048}, {2048, 256},  {2048, 256}, {2048, 2048},
                                 {2048, 5632}, {2048, 5632}, {5632, 2048}};  // {k, n}
    std::vector<std::pair<int64_t, int64_t>> all;
    for (int layer = 0; layer < 4 && !head_only; ++layer)
      for (const auto& s : shapes) all.emplace_back(s[0], s[1]);
    all.emplace_back(2048, cached ? 256 : 32000);
    matrices.resize(all.size());
    uint32_t state = 12345;
    auto next = [&state] { return state = state * 1664525u + 1013904223u; };
    int64_t widest_k = 0, widest_n = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      auto [k, n] = all[i];
      Matrix& m = matrices[i];
      const int64_t kb = k / 32;
      m.b.resize(n * kb * 16);
      for (uint8_t& v : m.b) v = static_cast<uint8_t>(next() >> 24);
      m.scales.resize(n * kb);
      for (float& s : m.scales) s = 0.001f + static_cast<float>(next() >> 24) * 1e-5f;
      m.view = NBitsView{m.b.data(), m.scales.data(), nullptr, nullptr, k, n, 4, 32, kb, 16};
      weights += k * n;
      bytes += static_cast<int64_t>(m.b.size() + 4 * m.scales.size());
      widest_k = std::max(widest_k, k);
      widest_n = std::max(widest_n, n);
    }
    std::vector<float> a(widest_k);
    for (float& v : a) v = static_cast<float>(static_cast<int32_t>(next())) * 1e-9f;
    q.resize(widest_k);
    scale.resize(widest_k / 32);
    sum.resize(widest_k / 32);
    QuantizeRowInt8(a.data(), widest_k, 32, q.data(), scale.data(), sum.data());
    y.resize(widest_n);
  }
};

void Run(benchmark::State& state, Model& m) {
  const NBitsKernelSet& kernels = AvailableNBitsKernels()[state.range(0)];
  state.SetLabel(kernels.name);
  for (auto _ : state)
    for (const Matrix& w : m.matrices)
      kernels.gemv_int8(w.view, Int8Row{m.q.data(), m.scale.data(), m.sum.data()}, m.y.data(), 0, w.view.n);
  benchmark::DoNotOptimize(m.y.data());
  state.SetItemsProcessed(state.iterations() * m.weights);
  state.SetBytesProcessed(state.iterations() * m.bytes);
}

void BM_DecodeStep(benchmark::State& state) {
  static Model model(false);
  Run(state, model);
}
void BM_Head(benchmark::State& state) {
  static Model model(true);
  Run(state, model);
}
void BM_Cached(benchmark::State& state) {
  static Model model(true, true);
  Run(state, model);
}

void Variants(benchmark::internal::Benchmark* b) {
  for (size_t i = 1; i < AvailableNBitsKernels().size(); ++i) b->Arg(static_cast<int64_t>(i));
}
BENCHMARK(BM_DecodeStep)->Apply(Variants);
BENCHMARK(BM_Head)->Apply(Variants);
BENCHMARK(BM_Cached)->Apply(Variants);

}  // namespace
}  // namespace attune::quantized

BENCHMARK_MAIN();
