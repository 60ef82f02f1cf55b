// Decode-time products: one row times every weight matrix of a model, which
// is bound by how fast the weights stream from memory. Times one pass of the
// weight GEMVs over GPT-2-small's 48 layer weights (12 × 768×2304, 768×768,
// 768×3072, 3072×768: 340 MB, far beyond the caches), packed by oneDNN
// (in_place:0) and read where they are, row-major (in_place:1). Divide its
// "bytes_per_second" by the read bandwidth bench/machine_peak measures in the
// same session for the share of the machine's bandwidth it reaches.
//
//   ./gemv_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "ops/matmul/onednn_matmul.h"

namespace attune {
namespace {

struct Layer {
  int64_t k, n;
};
constexpr Layer kLayers[] = {{768, 2304}, {768, 768}, {768, 3072}, {3072, 768}};
constexpr int kDepth = 12;

struct Model {
  std::vector<std::unique_ptr<OneDnnConstantMatMul>> weights;
  std::vector<std::vector<float>> plain;  // the matrices used in place
  std::vector<float> a, c;
  int64_t bytes = 0;

  explicit Model(bool in_place) {
    for (int layer = 0; layer < kDepth; ++layer)
      for (const Layer& l : kLayers) {
        std::vector<float> w(l.k * l.n);
        for (int64_t i = 0; i < l.k * l.n; ++i) w[i] = static_cast<float>((i * 7919 + layer) % 1000) / 1000.0f - 0.5f;
        std::vector<float> bias(l.n, 0.25f);
        OneDnnConstantMatMul::Options options;
        options.bias = bias.data();
        options.in_place = in_place;
        plain.push_back(std::move(w));
        weights.push_back(*OneDnnConstantMatMul::Create(plain.back().data(), l.k, l.n, options));
        if (!in_place) plain.back() = {};
        bytes += l.k * l.n * static_cast<int64_t>(sizeof(float));
      }
    a.assign(3072, 0.125f);
    c.assign(3072, 0.0f);
  }
};

Model& SharedModel(bool in_place) {
  static Model* packed = new Model(false);
  static Model* plain = new Model(true);
  return in_place ? *plain : *packed;
}

void BM_DecodeWeights(benchmark::State& state) {
  Model& model = SharedModel(state.range(1) != 0);
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    for (const auto& w : model.weights) {
      if (!w->Run(model.a.data(), 1, model.c.data(), threads).ok()) state.SkipWithError("GEMV failed");
    }
    benchmark::DoNotOptimize(model.c.data());
  }
  state.SetBytesProcessed(state.iterations() * model.bytes);
}
BENCHMARK(BM_DecodeWeights)->ArgsProduct({{1, 2}, {0, 1}})->ArgNames({"threads", "in_place"})->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attune

BENCHMARK_MAIN();
