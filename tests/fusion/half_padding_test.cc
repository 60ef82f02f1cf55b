// 16-bit attention behind a padding mask added to the scores (LLaMA's 4-D
// mask, OPT's clamp, GPT-2's (1 - m) * finfo.min): s + finfo(float16).min
// rounds in steps of 32, which decides the weights of a row whose every key
// is hidden (the first rows of a left-padded batch). The fused op computes
// such rows in float16 (score_rounding): with inputs large enough that those
// sums round apart, fused (on every backend) and unfused agree within two
// float16 units there, and the same fused op computing them in float32 does
// not. bfloat16 padding chains fuse the same way (their finfo.min absorbs
// every ordinary score). The causal mask alone added to float16 scores is in
// mixed_precision_test.cc.
#include <cmath>
#include <string>
#include <vector>

#include "engine/io/npy.h"
#include "gtest/gtest.h"
#include "tests/fusion/backend_runs.h"
#include "tests/fusion/model_pair.h"

namespace attune::testing {
namespace {

namespace fs = std::filesystem;

// Two units in the last place of float16 at the largest |y|.
double HalfUnits(const Tensor& y, double units) {
  const double largest = std::max(MaxAbsDifference(y, *Tensor::Create(y.type(), y.shape())), 1e-3);
  return units * std::ldexp(1.0, static_cast<int>(std::floor(std::log2(largest))) - 10);
}

// The stored inputs, with x times `factor` (in float16) so that hidden keys' scores reach past 16.
std::vector<Tensor> Inputs(const std::string& model, const Graph& g, float factor) {
  std::vector<Tensor> in;
  for (const Value* v : g.inputs()) {
    if (v->is_constant()) continue;
    auto t = ReadNpyFile((fs::path(SourceDir()) / "models" / model / "inputs" / (v->name() + ".npy")).string());
    EXPECT_TRUE(t.ok()) << t.status();
    if (!t.ok()) return {};
    if (v->name() == "x")
      for (int64_t i = 0; i < t->num_elements(); ++i)
        t->data<Float16>()[i] = FloatToHalf(HalfToFloat(t->data<Float16>()[i]) * factor);
    in.push_back(*std::move(t));
  }
  return in;
}

// The largest |a - b| over batch 1's first `rows` query rows of y (B, T, C), the rows its left padding hides.
double HiddenRowsDifference(const Tensor& a, const Tensor& b, int64_t rows) {
  const int64_t t = a.shape()[1], c = a.shape()[2];
  double d = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t x = 0; x < c; ++x) {
      const int64_t at = (t + i) * c + x;
      d = std::max<double>(d, std::fabs(HalfToFloat(a.data<Float16>()[at]) - HalfToFloat(b.data<Float16>()[at])));
    }
  return d;
}

// The fused MultiHeadAttention node of a graph, or nullptr.
Node* FusedNode(Graph& g) {
  for (Node* n : g.nodes())
    if (n->op_type() == "MultiHeadAttention") return n;
  return nullptr;
}

// The one fused block of a causal + padding model, its hidden rows computed
// in `rounding`; nullptr (and a failure) when the model did not fuse so.
Node* PaddedFusion(const ModelPair& p, const std::string& rounding) {
  if (p.fused == nullptr || p.report.fusions.size() != 1) {
    ADD_FAILURE() << "expected one fusion";
    return nullptr;
  }
  EXPECT_EQ(p.report.fusions[0].mask, "causal+padding");
  Node* fused = FusedNode(*p.fused);
  if (fused == nullptr) {
    ADD_FAILURE() << "no MultiHeadAttention node";
    return nullptr;
  }
  EXPECT_EQ(fused->attributes().GetString("score_rounding", "").value_or(""), rounding);
  return fused;
}

struct Case {
  const char* model;
  const char* form;  // what decides its hidden rows
};

class HalfPadding : public ::testing::TestWithParam<Case> {};

TEST_P(HalfPadding, RowsWithEveryKeyHiddenAreComputedInFloat16) {
  const std::string model = GetParam().model;
  ModelPair p = LoadModelPair(model);
  Node* fused = PaddedFusion(p, "float16");
  ASSERT_NE(fused, nullptr);

  const std::vector<Tensor> in = Inputs(model, *p.fused, 6.0f);
  auto want = RunGraph(*p.unfused, DefaultKernelRegistry(), in);
  ASSERT_TRUE(want.ok()) << want.status();
  const Tensor& y = (*want)[0];
  double hidden = 0;
  for (const Backend& b : Backends()) {
    auto got = RunWith(*p.fused, in, b);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_LE(MaxAbsDifference(y, (*got)[0]), HalfUnits(y, 4)) << GetParam().form << " on " << b.name;
    hidden = std::max(hidden, HiddenRowsDifference(y, (*got)[0], 2));
    EXPECT_LE(HiddenRowsDifference(y, (*got)[0], 2), HalfUnits(y, 2)) << GetParam().form << " on " << b.name;
  }

  // The same op with those rows computed in float32 (the sums s + fill not rounded) gives other rows.
  for (const char* name : {"score_rounding", "score_divisor", "score_floors"}) fused->mutable_attributes().Erase(name);
  auto unrounded = RunGraph(*p.fused, DefaultKernelRegistry(), in);
  ASSERT_TRUE(unrounded.ok()) << unrounded.status();
  EXPECT_GT(HiddenRowsDifference(y, (*unrounded)[0], 2), 4 * std::max(hidden, HalfUnits(y, 1))) << GetParam().form;
}

// bfloat16 LLaMA with an attention_mask: the mask chain is read at every
// bfloat16 score and fuses as causal + padding with bfloat16 rounding; the
// left-padded rows (every key hidden) agree with the subgraph within two
// bfloat16 units on every backend.
TEST(HalfPaddingBFloat16, FusesAsCausalPlusPaddingAndAgreesOnHiddenRows) {
  ModelPair p = LoadModelPair("precision_llama_bf16");
  ASSERT_NE(PaddedFusion(p, "bfloat16"), nullptr);
  std::vector<Tensor> in;
  for (const Value* v : p.fused->inputs()) {
    if (v->is_constant()) continue;
    auto t = ReadNpyFile((fs::path(SourceDir()) / "models" / "precision_llama_bf16" / "inputs" / (v->name() + ".npy"))
                             .string());
    ASSERT_TRUE(t.ok()) << t.status();
    in.push_back(*std::move(t));
  }
  auto want = RunGraph(*p.unfused, DefaultKernelRegistry(), in);
  ASSERT_TRUE(want.ok()) << want.status();
  const Tensor& y = (*want)[0];  // float32 (the model casts its output)
  const double largest = std::max(MaxAbsDifference(y, *Tensor::Create(y.type(), y.shape())), 1e-3);
  const double unit = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(largest))) - 7);
  const int64_t t = y.shape()[1], c = y.shape()[2];
  for (const Backend& b : Backends()) {
    auto got = RunWith(*p.fused, in, b);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_LE(MaxAbsDifference(y, (*got)[0]), 4 * unit) << b.name;
    double hidden = 0;
    for (int64_t i = 0; i < 2 * c; ++i)  // batch 1's first two rows: every key hidden
      hidden = std::max<double>(hidden, std::fabs(y.data<float>()[t * c + i] - (*got)[0].data<float>()[t * c + i]));
    EXPECT_LE(hidden, 2 * unit) << b.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, HalfPadding,
                         ::testing::Values(Case{"precision_llama_fp16", "s + min at every hidden key"},
                                           Case{"precision_opt_fp16", "max(s + min, min), both parts min"},
                                           Case{"precision_gpt2_fp16", "s + min where the padding alone hides"}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.model).substr(std::string("precision_").size());
                         });

}  // namespace
}  // namespace attune::testing
