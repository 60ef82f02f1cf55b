// Weights that one product alone reads are packed by its kernel and released
// from the graph, so that a model's weights are held once. The products still
// compute what the model says, the optimised model is exported with the
// weights as the model had them, a plan compiled later from the released graph
// (the unspecialised plan) takes the packed copy or restores the data, and a
// weight read by two nodes or packed with a folded scale stays in the graph.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "attune/session.h"
#include "core/ir/graph.h"
#include "engine/exec/plan.h"
#include "engine/session_access.h"
#include "engine/session_impl.h"
#include "gtest/gtest.h"
#include "ops/matmul/onednn_matmul.h"
#include "ops/registry.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

constexpr int64_t kRows = 5, kIn = 12, kHidden = 20, kOut = 7, kSide = 9;

std::vector<float> Values(int64_t count, int seed) {
  std::vector<float> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = static_cast<float>((i * 7 + seed * 13) % 23) / 23.0f - 0.5f;
  return v;
}

// The weights of HeldWeightsModel, row-major as the initializers store them.
struct Weights {
  std::vector<float> w1 = Values(kIn * kHidden, 1);      // MatMul B [K, N], read by one node
  std::vector<float> w2 = Values(kOut * kHidden, 2);     // Gemm B [N, K] (transB = 1), read by one node
  std::vector<float> bias = Values(kOut, 3);             // Gemm C
  std::vector<float> shared = Values(kIn * kSide, 4);    // MatMul B read by two nodes
  std::vector<float> scaled = Values(kIn * kSide, 5);    // Gemm B with alpha 0.5
};

// y = Gemm(MatMul(x, w1), w2, bias, transB = 1); s = MatMul(x, shared) + MatMul(Relu(x), shared);
// z = Gemm(x, scaled, alpha = 0.5).
onnx::ModelProto HeldWeightsModel(const Weights& w) {
  onnx::ModelProto m = MinimalModel(17);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {kRows, kIn});
  AddOutput(m, "y", onnx::TensorProto::FLOAT, {kRows, kOut});
  AddOutput(m, "s", onnx::TensorProto::FLOAT, {kRows, kSide});
  AddOutput(m, "z", onnx::TensorProto::FLOAT, {kRows, kSide});
  AddInitializer(m, "w1", onnx::TensorProto::FLOAT, {kIn, kHidden})->set_raw_data(RawBytes(w.w1));
  AddInitializer(m, "w2", onnx::TensorProto::FLOAT, {kOut, kHidden})->set_raw_data(RawBytes(w.w2));
  AddInitializer(m, "bias", onnx::TensorProto::FLOAT, {kOut})->set_raw_data(RawBytes(w.bias));
  AddInitializer(m, "shared", onnx::TensorProto::FLOAT, {kIn, kSide})->set_raw_data(RawBytes(w.shared));
  AddInitializer(m, "scaled", onnx::TensorProto::FLOAT, {kIn, kSide})->set_raw_data(RawBytes(w.scaled));
  AddNode(m, "MatMul", {"x", "w1"}, {"h"}, "first");
  auto* gemm = AddNode(m, "Gemm", {"h", "w2", "bias"}, {"y"}, "second");
  AddAttribute(gemm, "transB", onnx::AttributeProto::INT)->set_i(1);
  AddNode(m, "Relu", {"x"}, {"r"}, "relu");
  AddNode(m, "MatMul", {"x", "shared"}, {"s1"}, "side_a");
  AddNode(m, "MatMul", {"r", "shared"}, {"s2"}, "side_b");
  AddNode(m, "Add", {"s1", "s2"}, {"s"}, "side_sum");
  auto* scaled = AddNode(m, "Gemm", {"x", "scaled"}, {"z"}, "scaled");
  AddAttribute(scaled, "alpha", onnx::AttributeProto::FLOAT)->set_f(0.5f);
  return m;
}

// The three outputs in double precision.
struct Expected {
  std::vector<double> y, s, z;
};

Expected Reference(const std::vector<float>& x, const Weights& w) {
  Expected e{std::vector<double>(kRows * kOut), std::vector<double>(kRows * kSide), std::vector<double>(kRows * kSide)};
  for (int64_t i = 0; i < kRows; ++i) {
    std::vector<double> h(kHidden, 0.0);
    for (int64_t j = 0; j < kHidden; ++j)
      for (int64_t k = 0; k < kIn; ++k) h[j] += static_cast<double>(x[i * kIn + k]) * w.w1[k * kHidden + j];
    for (int64_t o = 0; o < kOut; ++o) {
      double acc = w.bias[o];
      for (int64_t j = 0; j < kHidden; ++j) acc += h[j] * w.w2[o * kHidden + j];
      e.y[i * kOut + o] = acc;
    }
    for (int64_t o = 0; o < kSide; ++o) {
      double s = 0.0, z = 0.0;
      for (int64_t k = 0; k < kIn; ++k) {
        const double xv = x[i * kIn + k];
        s += (xv + std::max(xv, 0.0)) * w.shared[k * kSide + o];
        z += 0.5 * xv * w.scaled[k * kSide + o];
      }
      e.s[i * kSide + o] = s;
      e.z[i * kSide + o] = z;
    }
  }
  return e;
}

void ExpectNear(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got.data<float>()[i], want[i], 1e-4) << what << " [" << i << "]";
}

void ExpectOutputs(const std::vector<Tensor>& outputs, const Expected& e) {
  ASSERT_EQ(outputs.size(), 3u);
  ExpectNear(outputs[0], e.y, "y");
  ExpectNear(outputs[1], e.s, "s");
  ExpectNear(outputs[2], e.z, "z");
}

class HeldWeightsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = Session::CreateFromBytes(Serialize(HeldWeightsModel(weights)));
    ASSERT_TRUE(created.ok()) << created.status();
    session = *std::move(created);
    auto input = Tensor::FromVector<float>({kRows, kIn}, x);
    ASSERT_TRUE(input.ok());
    input_tensor = *input;
  }

  const Graph& graph() const { return GetSessionImpl(*session).graph(); }
  const Value& value(const std::string& name) const { return *graph().FindValue(name); }

  std::vector<Tensor> RunSession() {
    auto out = session->Run({{"x", input_tensor}});
    EXPECT_TRUE(out.ok()) << out.status();
    std::vector<Tensor> tensors;
    if (out.ok())
      for (auto& [name, t] : *out) tensors.push_back(t);
    return tensors;
  }

  Weights weights;
  std::vector<float> x = Values(kRows * kIn, 6);
  std::unique_ptr<Session> session;
  Tensor input_tensor;
};

TEST_F(HeldWeightsTest, SoleReaderWeightsAreReleasedAndTheProductsStillComputeTheModel) {
  ExpectOutputs(RunSession(), Reference(x, weights));
  for (const std::string name : {"w1", "w2"}) {
    const Value& w = value(name);
    EXPECT_TRUE(w.is_constant()) << name;
    if (PackSoleReaderWeights()) {
      EXPECT_EQ(w.constant(), nullptr) << name << " is still held by the graph";
      EXPECT_NE(w.constant_holder(), nullptr) << name;
    } else {  // weights used in place: nothing to release
      EXPECT_NE(w.constant(), nullptr) << name;
    }
  }
  // Read by two products, or packed with alpha folded in: the graph keeps them.
  EXPECT_NE(value("shared").constant(), nullptr);
  EXPECT_NE(value("scaled").constant(), nullptr);
  EXPECT_NE(value("bias").constant(), nullptr);
}

TEST_F(HeldWeightsTest, TheExportedModelHasTheWeightsAsTheModelHadThem) {
  TempDir dir;
  ASSERT_TRUE(session->SaveOptimizedModel(dir / "optimised.onnx").ok());
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(ReadFile(dir / "optimised.onnx")));
  auto find = [&](const std::string& name) -> const onnx::TensorProto* {
    for (const auto& init : saved.graph().initializer())
      if (init.name() == name) return &init;
    return nullptr;
  };
  for (const auto& [name, values, dims] :
       {std::tuple{"w1", &weights.w1, std::vector<int64_t>{kIn, kHidden}},
        std::tuple{"w2", &weights.w2, std::vector<int64_t>{kOut, kHidden}}}) {
    const onnx::TensorProto* t = find(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(std::vector<int64_t>(t->dims().begin(), t->dims().end()), dims) << name;
    EXPECT_EQ(t->raw_data(), RawBytes(*values)) << name << " is not restored bit for bit";
  }
  auto reloaded = Session::Create(dir / "optimised.onnx");
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  auto out = (*reloaded)->Run({{"x", input_tensor}});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<Tensor> tensors;
  for (auto& [name, t] : *out) tensors.push_back(t);
  ExpectOutputs(tensors, Reference(x, weights));
}

TEST_F(HeldWeightsTest, APlanCompiledLaterFromTheReleasedGraphTakesThePackedWeights) {
  // As the unspecialised plan is: compiled at first use, after the release.
  auto plan = Plan::Compile(graph(), DefaultKernelRegistry(), ToExecOptions(SessionOptions{}));
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto out = (*plan)->Run({input_tensor});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectOutputs(*out, Reference(x, weights));
}

TEST(HeldWeights, AReleasedConstantANodeReadsPlainIsRestoredForIt) {
  const std::vector<float> w = Values(3 * 4, 7);
  OneDnnConstantMatMul::Options options;  // packed, not in place
  auto packed = OneDnnConstantMatMul::Create(w.data(), 3, 4, options);
  ASSERT_TRUE(packed.ok()) << packed.status();
  ASSERT_NE((*packed)->holder(), nullptr);
  // y = x + w, with w released to the packed product's holder.
  Graph graph;
  graph.SetOpset("", 17);
  Value* x = graph.AddValue("x", ElementType::kFloat32, ShapeFromDims({3, 4}));
  graph.AddInput(x);
  auto tensor = Tensor::FromVector<float>({3, 4}, w);
  ASSERT_TRUE(tensor.ok());
  Value* weight = graph.AddConstant("w", *tensor);
  graph.ReleaseConstant(weight, (*packed)->holder());
  Value* y = graph.AddValue("y", ElementType::kFloat32, ShapeFromDims({3, 4}));
  graph.AddNode("Add", "", "add", {x, weight}, {y});
  graph.AddOutput(y);
  auto plan = Plan::Compile(graph, DefaultKernelRegistry(), ToExecOptions(SessionOptions{}));
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::vector<float> xs = Values(3 * 4, 8);
  auto out = (*plan)->Run({*Tensor::FromVector<float>({3, 4}, xs)});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ((*out)[0].data<float>()[i], xs[i] + w[i]) << i;
}

TEST(HeldWeights, PackedWeightsRestoreBitForBitPlainOrTransposed) {
  constexpr int64_t k = 13, n = 37;  // not multiples of any block
  std::vector<float> w = Values(k * n, 9);
  w[5] = -0.0f;
  w[7] = 1e-40f;  // a subnormal
  for (const bool transposed : {false, true}) {
    OneDnnConstantMatMul::Options options;
    options.transpose_b = transposed;
    auto packed = OneDnnConstantMatMul::Create(w.data(), k, n, options);
    ASSERT_TRUE(packed.ok()) << packed.status();
    ASSERT_NE((*packed)->holder(), nullptr);
    auto restored = (*packed)->holder()->Restore();
    ASSERT_TRUE(restored.ok()) << restored.status();
    EXPECT_EQ(restored->shape(), transposed ? std::vector<int64_t>({n, k}) : std::vector<int64_t>({k, n}));
    ASSERT_EQ(restored->byte_size(), w.size() * sizeof(float));
    EXPECT_EQ(std::memcmp(restored->raw_data(), w.data(), restored->byte_size()), 0) << "transposed " << transposed;
    // A product made from the holder shares the copy and computes the same.
    auto again = OneDnnConstantMatMul::FromHeld((*packed)->holder(), transposed, nullptr);
    ASSERT_TRUE(again.ok()) << again.status();
    ASSERT_NE(*again, nullptr);
    EXPECT_EQ((*again)->holder(), (*packed)->holder());
    EXPECT_EQ(*OneDnnConstantMatMul::FromHeld((*packed)->holder(), !transposed, nullptr), nullptr);
  }
  OneDnnConstantMatMul::Options scaled;
  scaled.alpha = 0.5f;
  auto packed = OneDnnConstantMatMul::Create(w.data(), k, n, scaled);
  ASSERT_TRUE(packed.ok());
  EXPECT_EQ((*packed)->holder(), nullptr) << "a folded scale cannot be undone exactly";
}

}  // namespace
}  // namespace attune::testing
