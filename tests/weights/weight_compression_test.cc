// Compression of float weights at load (SessionOptions::weights): the
// products of tests/weights/data/products (gen_weight_fixtures.py) run as
// MatMulNBits and are compared with a double-precision dequantize-then-
// multiply reference over the same quantized data, unpacked here on its own;
// what is not a product with a constant B stays float, and no float copy of
// a compressed weight stays in the graph.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "attune/session.h"
#include "engine/io/npy.h"
#include "engine/session_access.h"
#include "gtest/gtest.h"
#include "importer/onnx_importer.h"
#include "ops/quantized/nbits_quantize.h"
#include "tests/common/paths.h"

namespace attune::testing {
namespace {

namespace fs = std::filesystem;

fs::path ProductsDir() { return fs::path(SourceDir()) / "tests" / "weights" / "data" / "products"; }

NamedTensors ProductsInputs() {
  NamedTensors inputs;
  for (const char* name : {"A", "A2", "ids", "X"}) {
    auto t = ReadNpyFile((ProductsDir() / "inputs" / (std::string(name) + ".npy")).string());
    EXPECT_TRUE(t.ok()) << t.status();
    inputs.emplace_back(name, *t);
  }
  return inputs;
}

const Tensor& Find(const NamedTensors& tensors, const std::string& name) {
  for (const auto& [n, t] : tensors)
    if (n == name) return t;
  static const Tensor kNone;
  ADD_FAILURE() << "no tensor " << name;
  return kNone;
}

// The float constants of the file, by initializer name, as float32 values.
std::map<std::string, Tensor> FileConstants() {
  std::map<std::string, Tensor> out;
  auto graph = ImportModelFromFile((ProductsDir() / "model.onnx").string());
  EXPECT_TRUE(graph.ok()) << graph.status();
  for (const char* name : {"B1", "bias1", "B2", "C2", "B3", "B4"}) {
    const Value* v = (*graph)->FindValue(name);
    EXPECT_TRUE(v != nullptr && v->constant() != nullptr) << name;
    out[name] = *v->constant();
  }
  return out;
}

// W[n][k] dequantized in double from MatMulNBits' packed B, scales and zero points.
std::vector<std::vector<double>> Dequantize(const quantized::NBitsConstants& c, int bits, int64_t k, int64_t n) {
  const int64_t k_blocks = c.scales.shape()[1], blob = c.b.shape()[2];
  const int64_t block = blob * 8 / bits;
  std::vector<std::vector<double>> w(n, std::vector<double>(k));
  for (int64_t row = 0; row < n; ++row)
    for (int64_t kk = 0; kk < k; ++kk) {
      const int64_t kb = kk / block, i = kk % block;
      const uint8_t* bytes = c.b.data<uint8_t>() + (row * k_blocks + kb) * blob;
      const int q = bits == 8 ? bytes[i] : (i % 2 == 0 ? bytes[i / 2] & 15 : bytes[i / 2] >> 4);
      int zp = 1 << (bits - 1);
      if (!c.zero_points.empty()) {
        const uint8_t* z = c.zero_points.data<uint8_t>() + row * c.zero_points.shape()[1];
        zp = bits == 8 ? z[kb] : (kb % 2 == 0 ? z[kb / 2] & 15 : z[kb / 2] >> 4);
      }
      w[row][kk] = (q - zp) * static_cast<double>(c.scales.data<float>()[row * k_blocks + kb]);
    }
  return w;
}

// The expected output of one product: A [rows, K] times W^T, plus a bias.
std::vector<double> Reference(const Tensor& a, const std::vector<std::vector<double>>& w, const float* bias) {
  const int64_t k = a.shape().back(), rows = a.num_elements() / k, n = static_cast<int64_t>(w.size());
  std::vector<double> y(rows * n);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double s = bias != nullptr ? bias[j] : 0.0;
      for (int64_t kk = 0; kk < k; ++kk) s += static_cast<double>(a.data<float>()[r * k + kk]) * w[j][kk];
      y[r * n + j] = s;
    }
  return y;
}

double RelativeError(const Tensor& got, const std::vector<double>& want) {
  EXPECT_EQ(got.num_elements(), static_cast<int64_t>(want.size()));
  double diff = 0, largest = 1e-30;
  for (size_t i = 0; i < want.size() && i < static_cast<size_t>(got.num_elements()); ++i) {
    diff = std::max(diff, std::fabs(got.data<float>()[i] - want[i]));
    largest = std::max(largest, std::fabs(want[i]));
  }
  return diff / largest;
}

struct Case {
  WeightFormat format;
  int block;
  bool symmetric;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return absl::StrCat(c.format == WeightFormat::kInt8 ? "int8" : "int4", "_b", c.block,
                      c.symmetric ? "_sym" : "_asym");
}

class WeightCompressionTest : public ::testing::TestWithParam<Case> {
 protected:
  SessionOptions Options(int threads) const {
    SessionOptions options;
    options.threads = threads;
    options.weights.format = GetParam().format;
    options.weights.block_size = GetParam().block;
    options.weights.symmetric = GetParam().symmetric;
    return options;
  }
  int bits() const { return GetParam().format == WeightFormat::kInt8 ? 8 : 4; }

  // W of `name` quantized as the session does, dequantized in double.
  std::vector<std::vector<double>> Quantized(const Tensor& b, bool n_major) const {
    quantized::FloatWeights fw;
    fw.data = b.raw_data();
    fw.type = b.type();
    fw.k = n_major ? b.shape()[1] : b.shape()[0];
    fw.n = n_major ? b.shape()[0] : b.shape()[1];
    fw.k_stride = n_major ? 1 : fw.n;
    fw.n_stride = n_major ? fw.k : 1;
    quantized::NBitsQuantizeOptions q{bits(), GetParam().block, GetParam().symmetric};
    auto c = quantized::QuantizeToNBits(fw, q, "test weight");
    EXPECT_TRUE(c.ok()) << c.status();
    return Dequantize(*c, bits(), fw.k, fw.n);
  }
};

TEST_P(WeightCompressionTest, ProductsMatchDequantizedReference) {
  auto s1 = Session::Create((ProductsDir() / "model.onnx").string(), Options(1));
  auto s2 = Session::Create((ProductsDir() / "model.onnx").string(), Options(2));
  ASSERT_TRUE(s1.ok()) << s1.status();
  ASSERT_TRUE(s2.ok()) << s2.status();
  const NamedTensors inputs = ProductsInputs();
  auto y1 = (*s1)->Run(inputs);
  auto y2 = (*s2)->Run(inputs);
  ASSERT_TRUE(y1.ok()) << y1.status();
  ASSERT_TRUE(y2.ok()) << y2.status();
  for (size_t i = 0; i < y1->size(); ++i) {
    const Tensor &a = (*y1)[i].second, &b = (*y2)[i].second;
    ASSERT_EQ(a.byte_size(), b.byte_size());
    EXPECT_EQ(0, std::memcmp(a.raw_data(), b.raw_data(), a.byte_size())) << (*y1)[i].first << ": threads differ";
  }
  std::map<std::string, Tensor> k = FileConstants();
  const Tensor& a = Find(inputs, "A");
  EXPECT_LE(RelativeError(Find(*y1, "Y1"), Reference(a, Quantized(k["B1"], false), k["bias1"].data<float>())), 1e-4);
  EXPECT_LE(RelativeError(Find(*y1, "Y2"), Reference(Find(inputs, "A2"), Quantized(k["B2"], true),
                                                    k["C2"].data<float>())), 1e-4);
  EXPECT_LE(RelativeError(Find(*y1, "Y3"), Reference(a, Quantized(k["B3"], true), nullptr)), 1e-4);
  EXPECT_LE(RelativeError(Find(*y1, "Y4"), Reference(a, Quantized(k["B4"], false), nullptr)), 1e-4);
  // The embedding is the float table's rows, bit for bit.
  const Tensor& y5 = Find(*y1, "Y5");
  const int64_t ids[6] = {0, 7, 39, 3, 3, 12};
  for (int r = 0; r < 6; ++r)
    EXPECT_EQ(0, std::memcmp(y5.data<float>() + r * 80, k["B3"].data<float>() + ids[r] * 80, 80 * sizeof(float)));
}

TEST_P(WeightCompressionTest, GraphHoldsOnlyTheQuantizedWeights) {
  auto session = Session::Create((ProductsDir() / "model.onnx").string(), Options(1));
  ASSERT_TRUE(session.ok()) << session.status();
  const Graph& graph = GetSessionImpl(**session).graph();
  int nbits = 0, float_products = 0;
  for (const Node* n : graph.nodes()) {
    if (n->op_type() == "MatMulNBits") {
      ++nbits;
      EXPECT_EQ(n->attributes().GetInt("bits").value_or(0), bits()) << n->name();
      EXPECT_EQ(n->attributes().GetInt("block_size").value_or(0), GetParam().block) << n->name();
      EXPECT_EQ(n->input(3) != nullptr, !GetParam().symmetric) << n->name();
    }
    float_products += n->op_type() == "MatMul" || n->op_type() == "FusedMatMul" || n->op_type() == "Gemm";
    // No float weight of a compressed product is read any more: the only
    // large float constant left is the embedding table the Gather reads.
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Value* in = n->input(i);
      if (in == nullptr || !in->is_constant() || in->type() != ElementType::kFloat32) continue;
      if (n->op_type() == "MatMulNBits" && i == 2) continue;  // the scales
      if (in->shape().has_value() && in->shape()->size() == 2) EXPECT_EQ(n->op_type(), "Gather") << in->name();
    }
  }
  EXPECT_EQ(nbits, 4);
  EXPECT_EQ(float_products, 1);  // the product of two activations
}

INSTANTIATE_TEST_SUITE_P(Formats, WeightCompressionTest,
                         ::testing::Values(Case{WeightFormat::kInt4, 32, false}, Case{WeightFormat::kInt4, 64, true},
                                           Case{WeightFormat::kInt4, 128, false}, Case{WeightFormat::kInt8, 32, false},
                                           Case{WeightFormat::kInt8, 16, true}),
                         CaseName);

TEST(WeightCompression, KeepOutputProductsLeavesThemFloatAndSaysWhy) {
  SessionOptions options;
  options.weights.format = WeightFormat::kInt4;
  options.weights.keep_output_products = true;
  auto session = Session::Create((ProductsDir() / "model.onnx").string(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  for (const Node* n : GetSessionImpl(**session).graph().nodes()) EXPECT_NE(n->op_type(), "MatMulNBits");
  int said = 0;
  for (const RejectedCandidate& r : (*session)->fusion_report().rejected) said += r.pattern == "weight_compression";
  EXPECT_EQ(said, 4);
}

TEST(WeightCompression, AsIsRunsTheFloatModel) {
  auto session = Session::Create((ProductsDir() / "model.onnx").string());
  ASSERT_TRUE(session.ok()) << session.status();
  for (const Node* n : GetSessionImpl(**session).graph().nodes()) EXPECT_NE(n->op_type(), "MatMulNBits");
}

}  // namespace
}  // namespace attune::testing

namespace attune::testing {
namespace {

// The file `attune quantize` wrote from models/hf_gpt2_prefill (int4, block
// 32, asymmetric), with ONNX Runtime 1.30's logits on it: Attune's run of the
// same file agrees, at 1 and 2 threads (float32 activations: within 1e-4).
TEST(QuantizedFile, MatchesOnnxRuntimeOnTheSameFile) {
  const fs::path dir = fs::path(SourceDir()) / "tests" / "weights" / "data" / "gpt2_int4_b32";
  const fs::path inputs = fs::path(SourceDir()) / "models" / "hf_gpt2_prefill" / "inputs";
  auto ort = ReadNpyFile((dir / "ort" / "logits.npy").string());
  ASSERT_TRUE(ort.ok()) << ort.status();
  for (int threads : {1, 2}) {
    SessionOptions options;
    options.threads = threads;
    auto session = Session::Create((dir / "model.onnx").string(), options);
    ASSERT_TRUE(session.ok()) << session.status();
    auto y = (*session)->Run({{"input_ids", *ReadNpyFile((inputs / "input_ids.npy").string())},
                              {"attention_mask", *ReadNpyFile((inputs / "attention_mask.npy").string())}});
    ASSERT_TRUE(y.ok()) << y.status();
    const Tensor& logits = Find(*y, "logits");
    std::vector<double> want(ort->data<float>(), ort->data<float>() + ort->num_elements());
    EXPECT_LE(RelativeError(logits, want), 1e-4) << threads << " threads";
  }
}

}  // namespace
}  // namespace attune::testing
