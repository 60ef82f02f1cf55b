// Whole-float16 graphs (float16 weights and activations, Casts at the float
// inputs and outputs, as onnxconverter-common and Optimum write them):
//  - the float16 ↔ float32 conversion every variant has, against the scalar
//    conversion over every float16 and special float32 values;
//  - the fixture of gen_whole_fp16_fixture.py, whose products over float16
//    weights run as HalfWeightMatMul between Casts, against ONNX Runtime's
//    outputs on the same file and against the same graph left unrewritten
//    (the reference loop), NaN rows and float16 overflow included;
//  - --save-optimized writes those products as standard ONNX, which loads
//    back as the same products with the same outputs.
#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attune/session.h"
#include "engine/io/npy.h"
#include "engine/session_access.h"
#include "gtest/gtest.h"
#include "importer/attention_export.h"
#include "importer/onnx_importer.h"
#include "ops/common/half_convert.h"
#include "tests/common/paths.h"

namespace attune::testing {
namespace {

namespace fs = std::filesystem;

TEST(HalfConvert, WideningMatchesScalarForEveryFloat16) {
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  for (const HalfConvertSet& set : AvailableHalfConverts()) {
    // An odd count: the last step is a tail.
    std::vector<float> got(all.size() + 1, 123.0f);
    set.widen(all.data(), static_cast<int64_t>(all.size()) - 1, got.data());
    for (size_t i = 0; i + 1 < all.size(); ++i) {
      const float want = HalfToFloat(Float16{all[i]});
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(got[i])) << set.name << " at " << i;
      else EXPECT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want)) << set.name << " at " << i;
    }
    EXPECT_EQ(got[all.size() - 1], 123.0f) << set.name << " wrote past the end";
  }
}

TEST(HalfConvert, NarrowingMatchesScalarRounding) {
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.5f, INFINITY, -INFINITY, std::nanf(""), -std::nanf(""),
                          65504.0f, 65519.99f, 65520.0f, -65520.0f, 1e6f,  // the largest float16, and overflow to inf
                          std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                          5.96e-8f, 2.98e-8f, 2.99e-8f, -6.0e-5f,            // float16 subnormals and their ties
                          std::bit_cast<float>(0x3f801000u), std::bit_cast<float>(0x3f803000u),  // ties to even
                          std::bit_cast<float>(0x7f800001u)};                // a signalling NaN
  std::mt19937 rng(16);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 5000; ++i) x.push_back(std::bit_cast<float>(bits(rng)));
  std::normal_distribution<float> normal(0.0f, 100.0f);
  for (int i = 0; i < 5000; ++i) x.push_back(normal(rng));
  for (const HalfConvertSet& set : AvailableHalfConverts()) {
    std::vector<uint16_t> got(x.size() + 1, 0xABCD);
    set.narrow(x.data(), static_cast<int64_t>(x.size()), got.data());
    for (size_t i = 0; i < x.size(); ++i) {
      const uint16_t want = FloatToHalf(x[i]).bits;
      if (std::isnan(x[i])) EXPECT_TRUE(std::isnan(HalfToFloat(Float16{got[i]}))) << set.name << " at " << i;
      else EXPECT_EQ(got[i], want) << set.name << " at " << i << " value " << x[i];
    }
    EXPECT_EQ(got.back(), 0xABCD) << set.name << " wrote past the end";
  }
}

fs::path FixtureDir() { return fs::path(SourceDir()) / "tests" / "weights" / "data" / "whole_fp16"; }

Tensor ReadNpy(const fs::path& path) {
  auto t = ReadNpyFile(path.string());
  EXPECT_TRUE(t.ok()) << path << ": " << t.status();
  return t.ok() ? *t : Tensor();
}

NamedTensors RunFixture(const std::string& inputs, const std::vector<std::string>& disabled, int* half_products) {
  SessionOptions options;
  options.threads = 1;
  options.disabled_passes = disabled;
  auto session = Session::Create((FixtureDir() / "model.onnx").string(), options);
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  *half_products = 0;
  for (const Node* n : GetSessionImpl(**session).graph().nodes()) *half_products += n->op_type() == "HalfWeightMatMul";
  auto y = (*session)->Run({{"X", ReadNpy(FixtureDir() / inputs / "X.npy")}});
  EXPECT_TRUE(y.ok()) << y.status();
  return y.ok() ? *y : NamedTensors{};
}

// The largest finite magnitude in t: errors of float16 sums scale with their
// terms, which a cancelling sum can dwarf.
double LargestFinite(const Tensor& t) {
  double largest = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i)
    if (std::isfinite(t.data<float>()[i])) largest = std::max(largest, std::fabs(double{t.data<float>()[i]}));
  return largest;
}

// got against want: the same NaNs; where want is beyond float16's range
// (ONNX Runtime runs a float16 product between Casts it then removes, so
// such a sum stays float32 there), got is inf of its sign; elsewhere within
// `rel` of the tensor's scale.
void ExpectMatches(const Tensor& got, const Tensor& want, double rel, const std::string& what) {
  ASSERT_EQ(got.num_elements(), want.num_elements()) << what;
  const double scale = 1.0 + std::min(65504.0, LargestFinite(want));
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const float g = got.data<float>()[i], w = want.data<float>()[i];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << what << " at " << i;
    } else if (std::fabs(w) > 65504.0f) {
      EXPECT_EQ(g, std::copysign(INFINITY, w)) << what << " at " << i << ": float16 overflows to inf";
    } else {
      EXPECT_NEAR(g, w, rel * scale) << what << " at " << i;
    }
  }
}

TEST(WholeFloat16Graph, ProductsRunOnHalfWeightsAndMatchOnnxRuntime) {
  for (const auto& [inputs, expected] : {std::pair{"inputs", "ort"}, std::pair{"inputs_big", "ort_big"}}) {
    int half = 0;
    const NamedTensors y = RunFixture(inputs, {}, &half);
    EXPECT_EQ(half, 3) << "Gemm, MatMul + bias and the tied head";
    ASSERT_EQ(y.size(), 3u);
    for (const auto& [name, t] : y)
      ExpectMatches(t, ReadNpy(FixtureDir() / expected / (name + ".npy")), 8e-3, std::string(inputs) + " " + name);
  }
}

TEST(WholeFloat16Graph, RewriteMatchesTheUnrewrittenGraph) {
  for (const char* inputs : {"inputs", "inputs_big"}) {
    int half = 0, none = 0;
    const NamedTensors y = RunFixture(inputs, {}, &half);
    const NamedTensors ref = RunFixture(inputs, {"weight_compression"}, &none);
    EXPECT_EQ(none, 0);
    ASSERT_EQ(y.size(), ref.size());
    for (size_t i = 0; i < y.size(); ++i) {
      const Tensor& g = y[i].second;
      const Tensor& w = ref[i].second;
      // Both sum in float32 and round to float16; the bias, which the rewrite
      // adds before that rounding, costs the unrewritten graph a second one.
      const double scale = 1.0 + LargestFinite(w);
      for (int64_t e = 0; e < w.num_elements(); ++e) {
        const float a = g.data<float>()[e], b = w.data<float>()[e];
        if (!std::isfinite(b)) {
          EXPECT_TRUE(std::isnan(b) ? std::isnan(a) : a == b) << inputs << " " << y[i].first << " at " << e;
        } else {
          EXPECT_NEAR(a, b, 2e-3 * scale) << inputs << " " << y[i].first << " at " << e;
        }
      }
    }
  }
}

TEST(WholeFloat16Graph, SavedModelIsStandardOnnxAndRunsTheSame) {
  SessionOptions options;
  options.threads = 1;
  auto session = Session::Create((FixtureDir() / "model.onnx").string(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  const fs::path saved = fs::path(::testing::TempDir()) / "whole_fp16_saved.onnx";
  ASSERT_TRUE(ExportOptimizedModelToFile(GetSessionImpl(**session).graph(), saved.string()).ok());
  auto graph = ImportModelFromFile(saved.string());
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (const Node* n : (*graph)->nodes()) EXPECT_TRUE(n->domain().empty()) << n->op_type() << " " << n->domain();
  // The fixture's weights are small enough for constant folding to widen
  // them (a real model's are not); without it they stay float16 behind their Cast.
  options.disabled_passes = {"constant_folding"};
  auto reloaded = Session::Create(saved.string(), options);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  int half = 0;
  for (const Node* n : GetSessionImpl(**reloaded).graph().nodes()) half += n->op_type() == "HalfWeightMatMul";
  EXPECT_EQ(half, 3);
  const NamedTensors inputs = {{"X", ReadNpy(FixtureDir() / "inputs" / "X.npy")}};
  auto first = (*session)->Run(inputs);
  auto again = (*reloaded)->Run(inputs);
  ASSERT_TRUE(first.ok() && again.ok());
  ASSERT_EQ(first->size(), again->size());
  for (size_t i = 0; i < first->size(); ++i) {
    const Tensor& a = (*first)[i].second;
    const Tensor& b = (*again)[i].second;
    ASSERT_EQ(a.num_elements(), b.num_elements());
    for (int64_t e = 0; e < a.num_elements(); ++e) {
      const float x = a.data<float>()[e], y = b.data<float>()[e];
      EXPECT_TRUE(std::isnan(x) ? std::isnan(y) : x == y) << (*first)[i].first << " at " << e;
    }
  }
  fs::remove(saved);
}

}  // namespace
}  // namespace attune::testing
