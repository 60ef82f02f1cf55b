// attune.FusedMatMul and attune.FusedGemm with an epilogue
// (ops/matmul/product_epilogue.h) against the plain product followed by the
// standalone Add, activation and Mul ops: the same bits on every path a product
// takes (the GEMV for up to four rows, oneDNN on packed weights, the
// transposed panel GEMM, a product of two graph inputs), NaN and ±inf
// included; and one clear error for a bad multiplier or attribute.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/common/graph_builder.h"
#include "tests/common/pattern_values.h"

namespace attune::testing {
namespace {

struct Activation {
  std::string op;  // "" for none
  Attributes attributes;
};

std::vector<Activation> Activations() {
  return {{"Gelu", Attrs({{"approximate", std::string("tanh")}})},
          {"Gelu", Attrs({{"approximate", std::string("none")}})},
          {"Swish", Attrs({{"alpha", 1.702f}})},
          {"Swish", {}},
          {"Relu", {}},
          {"", {}}};
}

// The fused node's attributes for `act`.
Attributes EpilogueAttributes(const Activation& act, Attributes attrs) {
  if (act.op.empty()) return attrs;
  attrs.Set("activation", act.op);
  if (act.attributes.Has("approximate"))
    attrs.Set("activation_approximate", *act.attributes.GetString("approximate"));
  if (act.attributes.Has("alpha")) attrs.Set("activation_alpha", *act.attributes.GetFloat("alpha"));
  return attrs;
}

enum class Product { kMatMul, kMatMulOfInputs, kTransposedB, kGemm };

struct Case {
  Product product;
  int64_t m, k, n;
  bool multiplied;
  bool biased = false;  // MatMul forms only: input 2, a row of n
};

// A with NaN, +inf and -inf in rows 0, 2 and 4 (where it has them).
Tensor OperandA(int64_t m, int64_t k) {
  std::vector<float> a = PatternValues(m * k, 1);
  for (float& v : a) v *= 8.0f;  // reach the activations' tails
  if (m > 0) a[std::min<int64_t>(3, k - 1)] = std::numeric_limits<float>::quiet_NaN();
  if (m > 2) a[2 * k] = std::numeric_limits<float>::infinity();
  if (m > 4) a[4 * k + 1] = -std::numeric_limits<float>::infinity();
  return Floats({m, k}, a);
}

// {fused graph, the product then the standalone ops}, with graph inputs
// a (, b) (, multiplier).
std::pair<std::unique_ptr<Graph>, std::unique_ptr<Graph>> Graphs(const Case& c, const Activation& act) {
  auto build = [&](bool fused) {
    GraphBuilder g(20);
    Value* a = g.Input("a", ElementType::kFloat32, Dims({c.m, c.k}));
    const bool transposed = c.product == Product::kTransposedB;
    const std::vector<int64_t> b_shape = transposed ? std::vector<int64_t>{c.n, c.k} : std::vector<int64_t>{c.k, c.n};
    Value* b = c.product == Product::kMatMulOfInputs ? g.Input("b", ElementType::kFloat32, Dims({c.k, c.n}))
                                                     : g.Constant("b", Floats(b_shape, PatternValues(c.k * c.n, 2)));
    Value* multiplier = c.multiplied ? g.Input("multiplier", ElementType::kFloat32, Dims({c.m, c.n})) : nullptr;
    Value* bias = c.biased ? g.Constant("bias", Floats({c.n}, PatternValues(c.n, 5))) : nullptr;
    std::vector<Value*> inputs = {a, b};
    std::string op = "MatMul", domain;
    Attributes attrs;
    if (c.product == Product::kGemm) {
      op = "Gemm";
      inputs.push_back(g.Constant("c", Floats({c.n}, PatternValues(c.n, 3))));
      attrs = Attrs({{"alpha", 0.5f}});
    }
    if (transposed) {
      op = "FusedMatMul";
      domain = "attune";
      attrs = Attrs({{"trans_b", int64_t{1}}});
    }
    if (fused) {
      if (bias != nullptr) inputs.push_back(bias);
      if (multiplier != nullptr) {
        if (c.product != Product::kGemm && bias == nullptr) inputs.push_back(nullptr);  // no bias
        inputs.push_back(multiplier);
      }
      const std::string fused_op = c.product == Product::kGemm ? "FusedGemm" : "FusedMatMul";
      g.Output(g.Node(fused_op, inputs, EpilogueAttributes(act, attrs), "fused", "attune"));
    } else {
      Value* y = g.Node(op, inputs, attrs, "product", domain);
      if (bias != nullptr) y = g.Node("Add", {y, bias});
      if (!act.op.empty()) y = g.Node(act.op, {y}, act.attributes);
      if (multiplier != nullptr) y = g.Node("Mul", {y, multiplier});
      g.Output(y);
    }
    g.graph().SetOpset("attune", 1);
    return g.Build();
  };
  return {build(true), build(false)};
}

std::vector<Tensor> Inputs(const Case& c) {
  std::vector<Tensor> inputs = {OperandA(c.m, c.k)};
  if (c.product == Product::kMatMulOfInputs) inputs.push_back(Floats({c.k, c.n}, PatternValues(c.k * c.n, 2)));
  if (c.multiplied) {
    std::vector<float> mult = PatternValues(c.m * c.n, 4);
    mult[0] = std::numeric_limits<float>::infinity();
    inputs.push_back(Floats({c.m, c.n}, mult));
  }
  return inputs;
}

bool SameBits(float x, float y) { return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof x) == 0; }

TEST(ProductEpilogue, GivesTheBitsOfTheProductThenTheStandaloneOps) {
  std::vector<Case> cases;
  for (int64_t m : {1, 3, 4, 5, 37})
    for (bool multiplied : {false, true}) {
      cases.push_back({Product::kMatMul, m, 70, 131, multiplied});
      cases.push_back({Product::kGemm, m, 70, 131, multiplied});
    }
  for (int64_t m : {1, 4, 16, 40}) cases.push_back({Product::kTransposedB, m, 70, 131, true});
  for (int64_t m : {1, 3, 37})
    for (bool multiplied : {false, true}) cases.push_back({Product::kMatMul, m, 70, 131, multiplied, true});
  cases.push_back({Product::kTransposedB, 20, 70, 131, false, true});
  cases.push_back({Product::kMatMulOfInputs, 9, 33, 50, true});
  cases.push_back({Product::kMatMulOfInputs, 2, 33, 50, false});
  int nonfinite = 0;
  for (const Case& c : cases)
    for (const Activation& act : Activations()) {
      if (act.op.empty() && !c.multiplied && !c.biased) continue;
      auto [fused, reference] = Graphs(c, act);
      const std::string what = ::testing::PrintToString(std::vector<int64_t>{static_cast<int64_t>(c.product), c.m}) +
                               " " + (act.op.empty() ? "none" : act.op) + (c.multiplied ? " x multiplier" : "") +
                               (c.biased ? " + bias" : "");
      auto got = RunGraph(*fused, DefaultKernelRegistry(), Inputs(c));
      ASSERT_TRUE(got.ok()) << what << ": " << got.status();
      auto want = RunGraph(*reference, DefaultKernelRegistry(), Inputs(c));
      ASSERT_TRUE(want.ok()) << what << ": " << want.status();
      ASSERT_EQ((*got)[0].shape(), (*want)[0].shape()) << what;
      const float* g = (*got)[0].data<float>();
      const float* w = (*want)[0].data<float>();
      for (int64_t i = 0; i < (*want)[0].num_elements(); ++i) {
        ASSERT_TRUE(SameBits(g[i], w[i])) << what << " at " << i << ": " << g[i] << " against " << w[i];
        nonfinite += !std::isfinite(w[i]);
      }
    }
  EXPECT_GT(nonfinite, 0);  // the NaN and infinities reached the outputs
}

// One line naming the node, for what the kernel cannot take.
TEST(ProductEpilogue, RefusesABadOperandOrAttribute) {
  // FusedMatMul(a [4, 8], b [8, 6], bias, multiplier) with operands of these shapes ({} for none).
  auto run = [](Attributes attrs, std::vector<int64_t> bias_shape, std::vector<int64_t> multiplier_shape,
                ElementType type) {
    GraphBuilder g(20);
    std::vector<Value*> inputs = {g.Input("a", type, Dims({4, 8})), g.Input("b", type, Dims({8, 6}))};
    std::vector<Tensor> values = {*Tensor::Create(type, {4, 8}), *Tensor::Create(type, {8, 6})};
    for (const auto& [name, shape] : {std::pair{"bias", bias_shape}, std::pair{"multiplier", multiplier_shape}}) {
      if (shape.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      inputs.push_back(g.Input(name, ElementType::kFloat32, SymbolicShape(shape.size(), Dim())));
      values.push_back(*Tensor::Create(ElementType::kFloat32, shape));
    }
    while (inputs.back() == nullptr) inputs.pop_back();
    g.Output(g.Node("FusedMatMul", inputs, std::move(attrs), "gate", "attune"));
    g.graph().SetOpset("attune", 1);
    return RunGraph(*g.Build(), DefaultKernelRegistry(), values).status();
  };
  const Attributes swish = Attrs({{"activation", std::string("Swish")}});
  const ElementType f32 = ElementType::kFloat32;
  EXPECT_TRUE(run(swish, {}, {4, 6}, f32).ok());
  EXPECT_TRUE(run(swish, {1, 6}, {4, 6}, f32).ok());
  absl::Status s = run(swish, {}, {1, 6}, f32);
  EXPECT_NE(s.message().find("FusedMatMul 'gate': the multiplier [1, 6] must have the product's shape [4, 6]"),
            std::string::npos)
      << s;
  s = run(swish, {2, 3}, {}, f32);
  EXPECT_NE(s.message().find("FusedMatMul 'gate': the bias [2, 3] must be one row of the product's last dim 6"),
            std::string::npos)
      << s;
  s = run(Attrs({{"activation", std::string("Tanh")}}), {}, {4, 6}, f32);
  EXPECT_NE(s.message().find("activation must be \"Relu\", \"Gelu\" or \"Swish\", got \"Tanh\""), std::string::npos)
      << s;
  s = run(Attrs({{"activation", std::string("Gelu")}, {"activation_approximate", std::string("fast")}}), {}, {4, 6},
          f32);
  EXPECT_NE(s.message().find("activation_approximate must be"), std::string::npos) << s;
  s = run(Attrs({{"activation", int64_t{1}}}), {}, {}, f32);
  EXPECT_NE(s.message().find("FusedMatMul 'gate': attribute 'activation' is not of type"), std::string::npos) << s;
  s = run(swish, {}, {4, 6}, ElementType::kFloat64);
  EXPECT_NE(s.message().find("needs float32 operands, got float64"), std::string::npos) << s;
}

}  // namespace
}  // namespace attune::testing
