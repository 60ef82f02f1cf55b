// The half-size weight product (attune.HalfWeightMatMul, ops/quantized/
// half_weights.h): every variant the CPU has against a double-precision
// reference over the same 16-bit weights, NaN and infinities in A included;
// variants and thread counts give the same bits. Then through the session:
// a float16 weight behind a Cast runs as one without a float32 copy, and
// --weights bf16 rounds float32 weights to bfloat16.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "attune/session.h"
#include "engine/io/npy.h"
#include "engine/session_access.h"
#include "gtest/gtest.h"
#include "importer/onnx_importer.h"
#include "ops/quantized/half_weights.h"
#include "tests/common/paths.h"

namespace attune::testing {
namespace {

namespace fs = std::filesystem;

struct Problem {
  int64_t m, k, n;
  bool bf16;
};

std::vector<uint16_t> RandomWeights(const Problem& p, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<uint16_t> w(p.n * p.k);
  for (uint16_t& x : w) x = p.bf16 ? FloatToBFloat16(dist(rng)).bits : FloatToHalf(dist(rng)).bits;
  return w;
}

double WidenDouble(uint16_t bits, bool bf16) {
  return bf16 ? BFloat16ToFloat(BFloat16{bits}) : HalfToFloat(Float16{bits});
}

class HalfWeightsTest : public ::testing::TestWithParam<Problem> {};

TEST_P(HalfWeightsTest, EveryVariantMatchesDoubleReference) {
  const Problem p = GetParam();
  std::mt19937 rng(static_cast<unsigned>(p.k * 31 + p.n));
  const std::vector<uint16_t> w = RandomWeights(p, rng);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> a(p.m * p.k);
  for (float& x : a) x = dist(rng);
  if (p.m > 1) a[p.k + 3] = std::nanf("");   // row 1 is NaN in every output
  if (p.m > 2) a[2 * p.k] = INFINITY;        // row 2 is ±inf or NaN
  std::vector<float> bias(p.n);
  for (float& x : bias) x = dist(rng);
  quantized::HalfView view{w.data(), p.bf16, p.k, p.n};
  std::vector<float> first;
  for (const quantized::HalfKernelSet& kernels : quantized::AvailableHalfKernels()) {
    for (int threads : {1, 2}) {
      std::vector<float> y(p.m * p.n);
      quantized::MultiplyHalfWeights(kernels, view, a.data(), p.m, bias.data(), y.data(), threads);
      for (int64_t r = 0; r < p.m; ++r) {
        double largest = 1e-30, diff = 0;
        for (int64_t j = 0; j < p.n; ++j) {
          double ref = bias[j];
          for (int64_t kk = 0; kk < p.k; ++kk) ref += static_cast<double>(a[r * p.k + kk]) * WidenDouble(w[j * p.k + kk], p.bf16);
          const float got = y[r * p.n + j];
          if (!std::isfinite(ref)) {
            EXPECT_TRUE(std::isnan(ref) ? std::isnan(got) : got == ref) << kernels.name << " row " << r << " col " << j;
            continue;
          }
          largest = std::max(largest, std::fabs(ref));
          diff = std::max(diff, std::fabs(got - ref));
        }
        EXPECT_LE(diff / largest, 1e-5) << kernels.name << " row " << r;
      }
      if (first.empty()) first = y;
      // The GEMV promises the same bits in every variant; sgemm panels only per thread count.
      if (p.m <= 4 || threads == 2)
        EXPECT_EQ(0, std::memcmp(first.data(), y.data(), y.size() * sizeof(float))) << kernels.name << " " << threads;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, HalfWeightsTest,
                         ::testing::Values(Problem{1, 64, 33, false}, Problem{3, 77, 130, true},
                                           Problem{4, 5, 17, false}, Problem{9, 100, 70, true},
                                           Problem{16, 64, 129, false}));

fs::path ProductsDir() { return fs::path(SourceDir()) / "tests" / "weights" / "data" / "products"; }

NamedTensors ProductsInputs() {
  NamedTensors inputs;
  for (const char* name : {"A", "A2", "ids", "X"})
    inputs.emplace_back(name, *ReadNpyFile((ProductsDir() / "inputs" / (std::string(name) + ".npy")).string()));
  return inputs;
}

// Y4 = A · float(B4), B4 float16 [80, 24], in double.
std::vector<double> Y4Reference(const Tensor& a, const Tensor& b4) {
  std::vector<double> y(6 * 24);
  for (int r = 0; r < 6; ++r)
    for (int j = 0; j < 24; ++j)
      for (int kk = 0; kk < 80; ++kk)
        y[r * 24 + j] += static_cast<double>(a.data<float>()[r * 80 + kk]) * HalfToFloat(b4.data<Float16>()[kk * 24 + j]);
  return y;
}

TEST(HalfWeightProducts, Float16WeightBehindCastRunsWithoutFloatCopy) {
  for (WeightFormat format : {WeightFormat::kAsIs, WeightFormat::kBf16}) {
    SessionOptions options;
    options.weights.format = format;
    // The fixture's weight is small enough for constant folding to widen it
    // (a real model's is not: folding adds at most 1 MiB); without folding it
    // stays a float16 weight behind its Cast, as in a real file.
    options.disabled_passes = {"constant_folding"};
    auto session = Session::Create((ProductsDir() / "model.onnx").string(), options);
    ASSERT_TRUE(session.ok()) << session.status();
    int half = 0;
    for (const Node* n : GetSessionImpl(**session).graph().nodes()) {
      EXPECT_NE(n->op_type(), "Cast") << "the float16 weight is widened at run time";
      if (n->op_type() != "HalfWeightMatMul") continue;
      ++half;
      const ElementType w = n->input(1)->type();
      EXPECT_EQ(w, n->name() == "proj4" ? ElementType::kFloat16 : ElementType::kBFloat16) << n->name();
    }
    EXPECT_EQ(half, format == WeightFormat::kAsIs ? 1 : 4);
    const NamedTensors inputs = ProductsInputs();
    auto y = (*session)->Run(inputs);
    ASSERT_TRUE(y.ok()) << y.status();
    auto graph = ImportModelFromFile((ProductsDir() / "model.onnx").string());
    ASSERT_TRUE(graph.ok());
    const std::vector<double> ref = Y4Reference(inputs[0].second, *(*graph)->FindValue("B4")->constant());
    for (const auto& [name, t] : *y) {
      if (name != "Y4") continue;
      for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(t.data<float>()[i], ref[i], 1e-5 * (1 + std::fabs(ref[i])));
    }
  }
}

TEST(HalfWeightProducts, Bf16MatchesRoundedWeightsReference) {
  SessionOptions options;
  options.weights.format = WeightFormat::kBf16;
  auto session = Session::Create((ProductsDir() / "model.onnx").string(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  const NamedTensors inputs = ProductsInputs();
  auto y = (*session)->Run(inputs);
  ASSERT_TRUE(y.ok()) << y.status();
  auto graph = ImportModelFromFile((ProductsDir() / "model.onnx").string());
  ASSERT_TRUE(graph.ok());
  const Tensor& b1 = *(*graph)->FindValue("B1")->constant();
  const Tensor& bias = *(*graph)->FindValue("bias1")->constant();
  const Tensor& a = inputs[0].second;
  for (const auto& [name, t] : *y) {
    if (name != "Y1") continue;
    for (int r = 0; r < 6; ++r)
      for (int j = 0; j < 48; ++j) {
        double ref = bias.data<float>()[j];
        for (int kk = 0; kk < 80; ++kk)
          ref += static_cast<double>(a.data<float>()[r * 80 + kk]) *
                 BFloat16ToFloat(FloatToBFloat16(b1.data<float>()[kk * 48 + j]));
        EXPECT_NEAR(t.data<float>()[r * 48 + j], ref, 1e-5 * (1 + std::fabs(ref))) << r << "," << j;
      }
  }
}

}  // namespace
}  // namespace attune::testing
