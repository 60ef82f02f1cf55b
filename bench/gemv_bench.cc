// Decode-time products: one row times every weight matrix of a model, which
// is bound by how fast the weights stream from memory. Times one pass of the
// weight GEMVs over GPT-2-small's 48 layer weights (12 × 768×2304, 768×768,
// 768×3072, 3072×768: 340 MB, far beyond the caches; llama:0) or a 4-layer
// TinyLlama's with its head (llama:1, 670 MB), packed by oneDNN (in_place:0)
// and read where they are, row-major (in_place:1); and GPT-2's tied head read
// as stored (BM_TiedHead). Divide its "bytes_per_second" by the read bandwidth
// bench/machine_peak measures in the same session for the share of the
// machine's bandwidth it reaches. The rows argument times a decode step of a
// continuous batch: that many rows through the same weights at once.
//
//   ./gemv_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <algorithm>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "ops/matmul/gemv_transposed.h"
#include "ops/matmul/onednn_matmul.h"

namespace attune {
namespace {

struct Layer {
  int64_t k, n;
};
struct Shape {
  std::vector<Layer> layer;  // one layer's weights
  int depth;
  std::vector<Layer> head;  // after the layers
};
// GPT-2 small (its tied head is BM_TiedHead), and TinyLlama's width at 4
// layers (Q, K, V, O, gate, up, down) with its untied 32 000-word head.
const Shape& ModelShape(bool llama) {
  static const Shape gpt2{{{768, 2304}, {768, 768}, {768, 3072}, {3072, 768}}, 12, {}};
  static const Shape tiny_llama{
      {{2048, 2048}, {2048, 256}, {2048, 256}, {2048, 2048}, {2048, 5632}, {2048, 5632}, {5632, 2048}},
      4,
      {{2048, 32000}}};
  return llama ? tiny_llama : gpt2;
}

// Rows of A the benchmarks take at most (a decode batch of that many sequences).
constexpr int64_t kMaxRows = 32;

struct Model {
  std::vector<std::unique_ptr<OneDnnConstantMatMul>> weights;
  std::vector<std::vector<float>> plain;  // the matrices used in place
  std::vector<float> a, c;
  int64_t bytes = 0;

  Model(bool in_place, const Shape& shape) {
    std::vector<Layer> all;
    for (int layer = 0; layer < shape.depth; ++layer) all.insert(all.end(), shape.layer.begin(), shape.layer.end());
    all.insert(all.end(), shape.head.begin(), shape.head.end());
    int64_t widest_k = 0, widest_n = 0;
    for (size_t index = 0; index < all.size(); ++index) {
      const Layer& l = all[index];
      std::vector<float> w(l.k * l.n);
      for (int64_t i = 0; i < l.k * l.n; ++i)
        w[i] = static_cast<float>((i * 7919 + static_cast<int64_t>(index)) % 1000) / 1000.0f - 0.5f;
      std::vector<float> bias(l.n, 0.25f);
      OneDnnConstantMatMul::Options options;
      options.bias = bias.data();
      options.in_place = in_place;
      plain.push_back(std::move(w));
      weights.push_back(*OneDnnConstantMatMul::Create(plain.back().data(), l.k, l.n, options));
      if (!in_place) plain.back() = {};
      bytes += l.k * l.n * static_cast<int64_t>(sizeof(float));
      widest_k = std::max(widest_k, l.k);
      widest_n = std::max(widest_n, l.n);
    }
    a.assign(kMaxRows * widest_k, 0.125f);
    c.assign(kMaxRows * widest_n, 0.0f);
  }
};

Model& SharedModel(bool in_place, bool llama) {
  static Model* models[2][2] = {};
  Model*& model = models[llama ? 1 : 0][in_place ? 1 : 0];
  if (model == nullptr) model = new Model(in_place, ModelShape(llama));
  return *model;
}

void BM_DecodeWeights(benchmark::State& state) {
  Model& model = SharedModel(state.range(1) != 0, state.range(2) != 0);
  const int threads = static_cast<int>(state.range(0));
  const int64_t rows = state.range(3);
  for (auto _ : state) {
    for (const auto& w : model.weights) {
      if (!w->Run(model.a.data(), rows, model.c.data(), threads).ok()) state.SkipWithError("GEMV failed");
    }
    benchmark::DoNotOptimize(model.c.data());
  }
  state.SetBytesProcessed(state.iterations() * model.bytes);
}
BENCHMARK(BM_DecodeWeights)
    ->ArgsProduct({{1, 2}, {0, 1}, {0, 1}, {1}})
    ->ArgNames({"threads", "in_place", "llama", "rows"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
// A continuous-batching decode step: rows sequences at once (up to 16 take the
// GEMVs, 17 and more oneDNN's GEMM, or on AVX2 machines the in-place row GEMM);
// the time should grow far slower than rows. ATTUNE_ISA=avx2 runs the AVX2 kernels.
BENCHMARK(BM_DecodeWeights)
    ->ArgsProduct({{1}, {0, 1}, {0}, {2, 4, 8, 16, 17}})
    ->ArgNames({"threads", "in_place", "llama", "rows"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The tied lm_head of GPT-2 at decode: one row times wte (50257 × 768,
// 154 MB) read as stored, each output one contiguous row of it.
void BM_TiedHead(benchmark::State& state) {
  constexpr int64_t kVocab = 50257, kWidth = 768;
  static const std::vector<float>* wte = [] {
    auto* w = new std::vector<float>(kVocab * kWidth);
    for (int64_t i = 0; i < kVocab * kWidth; ++i) (*w)[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
    return w;
  }();
  const int64_t rows = state.range(1);
  std::vector<float> a(rows * kWidth, 0.125f), c(rows * kVocab);
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    GemvTransposed(a.data(), wte->data(), c.data(), rows, kWidth, kVocab, threads);
    benchmark::DoNotOptimize(c.data());
  }
  state.SetBytesProcessed(state.iterations() * kVocab * kWidth * static_cast<int64_t>(sizeof(float)));
}
BENCHMARK(BM_TiedHead)
    ->ArgsProduct({{1, 2}, {1}})
    ->ArgsProduct({{1}, {4, 8, 16}})
    ->ArgNames({"threads", "rows"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attune

BENCHMARK_MAIN();
