// The half-size weight product (attune.HalfWeightMatMul, ops/quantized/
// half_weights.h): every variant the CPU has against a double-precision
// reference over the same 16-bit weights, NaN and infinities in A included;
// variants and thread counts give the same bits. Then through the session:
// a float16 weight behind a Cast runs as one without a float32 copy, and
// --weights bf16 rounds float32 weights to bfloat16 (and A, at accuracy_level
// 3, its default: the packed bf16 product is checked on its own too).
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <filesystem>
#include <random>
#include <vector>

#include "attune/session.h"
#include "engine/io/npy.h"
#include "engine/session_access.h"
#include "gtest/gtest.h"
#include "importer/onnx_importer.h"
#include "ops/quantized/bf16_product_onednn.h"
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

TEST(HalfWeightProducts, RoundingToBf16MatchesScalarInEveryVariant) {
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.5f, INFINITY, -INFINITY, std::nanf(""), -std::nanf(""),
                          std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::min(), -3.0e-39f,
                          std::bit_cast<float>(0x3f808000u),   // a tie, rounds down to even
                          std::bit_cast<float>(0x3f818000u),   // a tie, rounds up to even
                          std::bit_cast<float>(0x7f7fffffu),   // rounds up to infinity
                          std::bit_cast<float>(0x7f800001u)};  // a signalling NaN
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 1000; ++i) x.push_back(std::bit_cast<float>(bits(rng)));
  for (const quantized::HalfKernelSet& kernels : quantized::AvailableHalfKernels()) {
    std::vector<uint16_t> got(x.size() + 1, 0xABCD);
    kernels.round_to_bf16(x.data(), static_cast<int64_t>(x.size()), got.data());
    for (size_t i = 0; i < x.size(); ++i) {
      const uint16_t want = FloatToBFloat16(x[i]).bits;
      EXPECT_EQ(got[i], want) << kernels.name << " at " << i << " bits " << std::bit_cast<uint32_t>(x[i]);
      if (std::isnan(x[i])) EXPECT_TRUE(std::isnan(BFloat16ToFloat(BFloat16{got[i]}))) << kernels.name;
    }
    EXPECT_EQ(got.back(), 0xABCD) << kernels.name << " wrote past the end";
  }
}

// The packed product against a double-precision sum over the same bfloat16
// values: every product of two bfloat16 values is exact in float32, so only
// the float32 sums differ, by at most K·2⁻²⁴ of Σ|a·w|.
TEST(HalfWeightProducts, PackedBf16ProductMatchesDoubleReference) {
  for (const Problem p : {Problem{1, 64, 33, true}, Problem{5, 77, 130, true}, Problem{128, 300, 257, true}}) {
    std::mt19937 rng(static_cast<unsigned>(p.m + p.k));
    const std::vector<uint16_t> w = RandomWeights(p, rng);
    auto product = quantized::Bf16PackedProduct::Create(w.data(), p.n, p.k);
    ASSERT_TRUE(product.ok()) << product.status();
    if (*product == nullptr) GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<uint16_t> a(p.m * p.k);
    for (uint16_t& x : a) x = FloatToBFloat16(dist(rng)).bits;
    if (p.m > 1) a[p.k + 3] = FloatToBFloat16(std::nanf("")).bits;  // row 1 is NaN everywhere
    if (p.m > 2) a[2 * p.k] = FloatToBFloat16(INFINITY).bits;       // row 2 is ±inf or NaN
    std::vector<float> bias(p.n);
    for (float& x : bias) x = dist(rng);
    std::vector<float> first;
    for (int threads : {1, 2}) {
      std::vector<float> y(p.m * p.n);
      ASSERT_TRUE((*product)->Run(a.data(), p.m, bias.data(), y.data(), threads).ok());
      for (int64_t r = 0; r < p.m; ++r)
        for (int64_t j = 0; j < p.n; ++j) {
          double ref = bias[j], magnitude = std::fabs(bias[j]);
          for (int64_t kk = 0; kk < p.k; ++kk) {
            const double term = WidenDouble(a[r * p.k + kk], true) * WidenDouble(w[j * p.k + kk], true);
            ref += term;
            magnitude += std::fabs(term);
          }
          const float got = y[r * p.n + j];
          if (std::isnan(ref)) {
            EXPECT_TRUE(std::isnan(got)) << r << "," << j;
          } else if (std::isinf(ref)) {
            EXPECT_EQ(got, ref) << r << "," << j;
          } else {
            EXPECT_LE(std::fabs(got - ref), static_cast<double>(p.k + 1) * 0x1p-24 * magnitude) << r << "," << j;
          }
        }
      if (first.empty()) first = y;
      EXPECT_EQ(0, std::memcmp(first.data(), y.data(), y.size() * sizeof(float))) << "threads " << threads;
    }
    // The packed copy is the only one held: it gives W back exactly.
    auto restored = (*product)->holder()->Restore();
    ASSERT_TRUE(restored.ok()) << restored.status();
    ASSERT_EQ(restored->shape(), (std::vector<int64_t>{p.n, p.k}));
    EXPECT_EQ(0, std::memcmp(restored->raw_data(), w.data(), w.size() * sizeof(uint16_t)));
  }
}

// Y1 = A · bf16(B1) + bias1 in double, A rounded to bfloat16 when `round_a`.
void ExpectBf16Y1(const NamedTensors& outputs, const Tensor& a, const Tensor& b1, const Tensor& bias, bool round_a) {
  bool seen = false;
  for (const auto& [name, t] : outputs) {
    if (name != "Y1") continue;
    seen = true;
    for (int r = 0; r < 6; ++r)
      for (int j = 0; j < 48; ++j) {
        double ref = bias.data<float>()[j];
        for (int kk = 0; kk < 80; ++kk) {
          const float x = a.data<float>()[r * 80 + kk];
          ref += static_cast<double>(round_a ? BFloat16ToFloat(FloatToBFloat16(x)) : x) *
                 BFloat16ToFloat(FloatToBFloat16(b1.data<float>()[kk * 48 + j]));
        }
        EXPECT_NEAR(t.data<float>()[r * 48 + j], ref, 1e-5 * (1 + std::fabs(ref))) << r << "," << j;
      }
  }
  EXPECT_TRUE(seen);
}

TEST(HalfWeightProducts, Bf16RoundsActivationsUnlessAccuracyLevelOne) {
  for (int level : {0, 1, 4}) {
    SessionOptions options;
    options.weights.format = WeightFormat::kBf16;
    options.weights.accuracy_level = level;
    auto session = Session::Create((ProductsDir() / "model.onnx").string(), options);
    ASSERT_TRUE(session.ok()) << session.status();
    const NamedTensors inputs = ProductsInputs();
    auto y = (*session)->Run(inputs);
    ASSERT_TRUE(y.ok()) << y.status();
    auto graph = ImportModelFromFile((ProductsDir() / "model.onnx").string());
    ASSERT_TRUE(graph.ok());
    ExpectBf16Y1(*y, inputs[0].second, *(*graph)->FindValue("B1")->constant(),
                 *(*graph)->FindValue("bias1")->constant(), level != 1);
  }
}

}  // namespace
}  // namespace attune::testing
