// Vectorised float32 element-wise kernels (ops/elementwise/vector_math.h)
// against the scalar std:: loops the ops ran before, one thread, on 2^16
// floats (in and out fit in L2, so this measures the arithmetic, not memory).
// "scalar" is the old loop; "generic", "avx2", "avx512" the kernels of each
// level this CPU has. The Elements counter is a rate: elements per second.
//
//   elementwise_bench --benchmark_filter=Tanh
#include <benchmark/benchmark.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "ops/common/cpu_features.h"
#include "ops/elementwise/vector_math.h"

namespace attune::elementwise {
namespace {

constexpr int64_t kElements = int64_t{1} << 16;

std::vector<float> Inputs() {
  std::vector<float> x(kElements);
  // Activations-like values, both branches of every piecewise function.
  for (int64_t i = 0; i < kElements; ++i) x[i] = 6.0f * std::sin(0.001f * static_cast<float>(i)) + 0.1f;
  return x;
}

// The element functions of the scalar path (activations.cc, unary_math.cc, pow.cc).
float ScalarOp(VectorOp op, float x) {
  switch (op) {
    case VectorOp::kExp: return std::exp(x);
    case VectorOp::kLog: return std::log(std::fabs(x));
    case VectorOp::kTanh: return std::tanh(x);
    case VectorOp::kErf: return std::erf(x);
    case VectorOp::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case VectorOp::kSoftplus: return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    case VectorOp::kGeluErf: return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(1 / std::numbers::sqrt2)));
    case VectorOp::kGeluTanh: {
      const float k = static_cast<float>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
      return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
    case VectorOp::kMish:
      return x * std::tanh(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)));
  }
  return x;
}

template <typename Fn>
void Loop(benchmark::State& state, Fn fn) {
  for (auto _ : state) {
    fn();
    benchmark::ClobberMemory();
  }
  state.counters["Elements"] = benchmark::Counter(static_cast<double>(kElements),
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Scalar(benchmark::State& state, VectorOp op) {
  std::vector<float> x = Inputs(), y(kElements);
  // Log takes |x| in the vector runs too (below), so both see the same values.
  if (op == VectorOp::kLog)
    for (float& v : x) v = std::fabs(v);
  Loop(state, [&] {
    for (int64_t i = 0; i < kElements; ++i) y[i] = ScalarOp(op, x[i]);
  });
}

void BM_Vector(benchmark::State& state, VectorOp op, Isa isa) {
  if (!IsaSupported(isa)) {
    state.SkipWithError("CPU lacks this ISA");
    return;
  }
  std::vector<float> x = Inputs(), y(kElements);
  if (op == VectorOp::kLog)
    for (float& v : x) v = std::fabs(v);
  const VectorUnaryFn fn = VectorMathKernelsFor(isa).unary[static_cast<int>(op)];
  Loop(state, [&] { fn(x.data(), y.data(), kElements); });
}

void BM_PowCubeScalar(benchmark::State& state) {
  const std::vector<float> x = Inputs();
  std::vector<float> y(kElements);
  Loop(state, [&] {
    for (int64_t i = 0; i < kElements; ++i) y[i] = std::pow(x[i], 3.0f);
  });
}

void BM_PowCubeVector(benchmark::State& state, Isa isa) {
  if (!IsaSupported(isa)) {
    state.SkipWithError("CPU lacks this ISA");
    return;
  }
  const std::vector<float> x = Inputs();
  std::vector<float> y(kElements);
  const VectorPowIntFn fn = VectorMathKernelsFor(isa).pow_int;
  Loop(state, [&] { fn(x.data(), y.data(), kElements, 3); });
}

void RegisterAll() {
  for (int i = 0; i < kVectorOpCount; ++i) {
    const VectorOp op = static_cast<VectorOp>(i);
    const std::string name = VectorOpName(op);
    benchmark::RegisterBenchmark((name + "/scalar").c_str(), BM_Scalar, op)->Unit(benchmark::kMicrosecond);
    for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512})
      benchmark::RegisterBenchmark((name + "/" + IsaName(isa)).c_str(), BM_Vector, op, isa)
          ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("PowCube/scalar", BM_PowCubeScalar)->Unit(benchmark::kMicrosecond);
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512})
    benchmark::RegisterBenchmark((std::string("PowCube/") + IsaName(isa)).c_str(), BM_PowCubeVector, isa)
        ->Unit(benchmark::kMicrosecond);
}

}  // namespace
}  // namespace attune::elementwise

int main(int argc, char** argv) {
  attune::elementwise::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
