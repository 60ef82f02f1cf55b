// Attention in float16 and bfloat16 with the Cast pairs exporters write around
// the softmax: which Casts a fusion absorbs (those that lose nothing of the
// attention's type) and which it must refuse (a Cast that rounds float32
// scores or probabilities to float16, float16 ones to bfloat16, or to an
// integer), and float16 scores that overflow to ±inf in the subgraph.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/schema/multi_head_attention.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/common/graph_builder.h"
#include "tests/common/torch_export_graphs.h"
#include "tests/fusion/backend_runs.h"

namespace attune::testing {
namespace {

constexpr int64_t kHeadDim = 8;
constexpr ElementType kF32 = ElementType::kFloat32;
constexpr ElementType kF16 = ElementType::kFloat16;
constexpr ElementType kBF16 = ElementType::kBFloat16;

struct Graphs {
  ElementType type = kF32;               // of Q, K, V, the scores and the output
  std::vector<ElementType> before;       // Casts between the scale and the Softmax
  std::vector<ElementType> after;        // Casts between the Softmax and P·V
  float divisor = std::sqrt(static_cast<float>(kHeadDim));
  bool scale_on_q = false;               // Q·(1/divisor) before the MatMul instead
  bool additive_mask = false;            // + a mask input [2, 1, seq, seq] of the type after the scale
  bool causal_add = false;               // + triu(full((seq, seq), finfo.min), 1) after the scale (LLaMA's)
};

Tensor ScalarIn(ElementType type, float v) {
  if (type == kF16) return Tensor::Scalar<Float16>(FloatToHalf(v));
  if (type == kBF16) return Tensor::Scalar<BFloat16>(FloatToBFloat16(v));
  return Tensor::Scalar<float>(v);
}

Attributes CastTo(ElementType t) { return Attrs({{"to", static_cast<int64_t>(t)}}); }

// q, k, v [2, 2, seq, 8] -> MatMul(q, kᵀ) / √8 -> casts -> Softmax -> casts -> MatMul(p, v).
std::unique_ptr<Graph> Build(const Graphs& g) {
  GraphBuilder b(17);
  Value* q = b.Input("q", g.type, Dims({2, 2, "seq", kHeadDim}));
  Value* k = b.Input("k", g.type, Dims({2, 2, "seq", kHeadDim}));
  Value* v = b.Input("v", g.type, Dims({2, 2, "seq", kHeadDim}));
  if (g.scale_on_q) q = b.Node("Mul", {q, b.Constant("inv_d", ScalarIn(g.type, 1.0f / g.divisor))});
  Value* kt = b.Node("Transpose", {k}, Attrs({{"perm", std::vector<int64_t>{0, 1, 3, 2}}}));
  Value* s = b.Node("MatMul", {q, kt}, {}, "scores");
  if (!g.scale_on_q) s = b.Node("Div", {s, b.Constant("sqrt_d", ScalarIn(g.type, g.divisor))});
  if (g.additive_mask) s = b.Node("Add", {s, b.Input("mask", g.type, Dims({2, 1, "seq", "seq"}))});
  if (g.causal_add) {
    Value* seq = b.Node("Gather", {b.Node("Shape", {q}), b.Constant("two", Int64s({2}))}, Attrs({{"axis", int64_t{0}}}));
    Attributes lowest;
    lowest.Set("value", g.type == kF16 ? *Tensor::FromVector<Float16>({1}, {FloatToHalf(-65504.0f)})
                                       : *Tensor::FromVector<float>({1}, {std::numeric_limits<float>::lowest()}));
    Value* full = b.Node("ConstantOfShape", {b.Node("Concat", {seq, seq}, Attrs({{"axis", int64_t{0}}}))}, lowest);
    Value* upper = b.Node("Trilu", {full, b.Constant("k1", ScalarOf<int64_t>(1))}, Attrs({{"upper", int64_t{1}}}));
    s = b.Node("Add", {s, upper});
  }
  for (ElementType t : g.before) s = b.Node("Cast", {s}, CastTo(t));
  Value* p = b.Node("Softmax", {s}, Attrs({{"axis", int64_t{-1}}}));
  for (ElementType t : g.after) p = b.Node("Cast", {p}, CastTo(t));
  b.Output(b.Node("MatMul", {p, v}, {}, "pv"));
  return b.Build();
}

struct Optimised {
  std::unique_ptr<Graph> graph;
  FusionReport report;
};

Optimised Optimise(const Graphs& g, bool fuse) {
  Optimised out{Build(g), {}};
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = &out.report;
  EXPECT_TRUE(DefaultPipeline(fuse)->Run(*out.graph, context).ok());
  return out;
}

const Node* FusedNode(const Graph& graph) {
  for (const Node* n : graph.nodes())
    if (n->op_type() == mha::kOpType) return n;
  return nullptr;
}

// The reasons of every rejected candidate, one per line.
std::string Rejections(const FusionReport& r) {
  std::string out;
  for (const auto& rej : r.rejected) absl::StrAppend(&out, rej.reason, "\n");
  return out;
}

// Inputs of the graph's type with entries `magnitude` · a pseudo-random number in [-1, 1].
std::vector<Tensor> Inputs(ElementType type, int64_t t, float magnitude) {
  std::vector<Tensor> in;
  for (int seed : {21, 22, 23}) {
    Tensor r = PseudoRandom({2, 2, t, kHeadDim}, seed);
    Tensor x = *Tensor::Create(type, r.shape());
    for (int64_t i = 0; i < r.num_elements(); ++i) {
      const float f = r.data<float>()[i] * magnitude;
      if (type == kF16) x.data<Float16>()[i] = FloatToHalf(f);
      else if (type == kBF16) x.data<BFloat16>()[i] = FloatToBFloat16(f);
      else x.data<float>()[i] = f;
    }
    in.push_back(std::move(x));
  }
  return in;
}

float At(const Tensor& t, int64_t i) {
  if (t.type() == kF16) return HalfToFloat(t.data<Float16>()[i]);
  if (t.type() == kBF16) return BFloat16ToFloat(t.data<BFloat16>()[i]);
  return t.data<float>()[i];
}

struct Comparison {
  double max_error = 0.0;   // over entries finite in both
  double largest = 0.0;     // max |unfused|
  int64_t nan_both = 0;
  int64_t nan_mismatch = 0;  // NaN (or ±inf) in one and not the other
};

Comparison Compare(const Tensor& unfused, const Tensor& fused) {
  Comparison c;
  for (int64_t i = 0; i < unfused.num_elements(); ++i) {
    const float a = At(unfused, i), b = At(fused, i);
    if (!std::isfinite(a) || !std::isfinite(b)) {
      if (std::isnan(a) && std::isnan(b)) ++c.nan_both;
      else if (!(a == b)) ++c.nan_mismatch;
      continue;
    }
    c.max_error = std::max(c.max_error, std::fabs(static_cast<double>(a) - b));
    c.largest = std::max(c.largest, std::fabs(static_cast<double>(a)));
  }
  return c;
}

// Two units in the last place of a 16-bit `type` at `x` (the subgraph rounds
// scores, probabilities and the output, the fused op only the output); in
// float32 the 1e-5 of every fusion test.
double Tolerance(ElementType type, double x) {
  if (type == kF32) return 1e-5;
  const int bits = type == kF16 ? 10 : 7;
  return 2 * std::ldexp(1.0, static_cast<int>(std::floor(std::log2(std::max(x, 1e-3)))) - bits);
}

struct AbsorbCase {
  std::string name;
  Graphs graphs;
};

class AbsorbedCastsTest : public ::testing::TestWithParam<AbsorbCase> {};

// Casts that lose nothing of the attention's type are absorbed, and the fused
// op agrees with the subgraph within two units of the type at max |y| on
// every backend (the subgraph rounds scores and probabilities to the type,
// the fused op rounds once).
TEST_P(AbsorbedCastsTest, FusesAndAgreesWithinTwoUnitsOfTheType) {
  const Graphs& g = GetParam().graphs;
  Optimised fused = Optimise(g, true);
  Optimised unfused = Optimise(g, false);
  const Node* mha = FusedNode(*fused.graph);
  ASSERT_NE(mha, nullptr) << Rejections(fused.report);
  EXPECT_EQ(CountOps(*fused.graph, "Cast"), 0);
  EXPECT_EQ(mha->attributes().Has(mha::kScoreLimit), g.type == kF16);
  for (int64_t t : {3, 9, 40}) {
    const std::vector<Tensor> in = Inputs(g.type, t, 2.0f);
    auto want = RunWith(*unfused.graph, in, {"default", AttentionBackend::kAuto, std::nullopt});
    ASSERT_TRUE(want.ok()) << want.status();
    for (const Backend& b : Backends()) {
      auto got = RunWith(*fused.graph, in, b);
      ASSERT_TRUE(got.ok()) << b.name << ": " << got.status();
      ASSERT_EQ((*got)[0].type(), g.type);
      const Comparison c = Compare((*want)[0], (*got)[0]);
      EXPECT_EQ(c.nan_mismatch + c.nan_both, 0) << b.name;
      EXPECT_LE(c.max_error, Tolerance(g.type, c.largest)) << b.name << " T=" << t << " max|y| " << c.largest;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Casts, AbsorbedCastsTest,
    ::testing::Values(
        // T5: softmax(scores.float()).type_as(scores).
        AbsorbCase{"fp16_t5", {kF16, {kF32}, {kF16}}},
        // torch 1.13's softmax(w, dtype=float32).to(float16): Softmax, Cast(float32), Cast(float16).
        AbsorbCase{"fp16_softmax_dtype", {kF16, {}, {kF32, kF16}}},
        // OPT: the scale on Q before the MatMul.
        AbsorbCase{"fp16_scale_on_q", {kF16, {}, {kF32, kF16}, 4.0f, true}},
        AbsorbCase{"bf16_t5", {kBF16, {kF32}, {kBF16}}},
        AbsorbCase{"bf16_softmax_dtype", {kBF16, {}, {kF32, kBF16}}},
        // float32 through float64 and back: nothing lost either way.
        AbsorbCase{"fp32_via_fp64", {kF32, {ElementType::kFloat64}, {kF32}}}),
    [](const ::testing::TestParamInfo<AbsorbCase>& info) { return info.param.name; });

struct RefuseCase {
  std::string name;
  Graphs graphs;
  std::string reason;  // a part of the rejection's reason
};

class RefusedCastsTest : public ::testing::TestWithParam<RefuseCase> {};

// A Cast that changes values the fused op would not change stays unfused,
// with the reason in the report.
TEST_P(RefusedCastsTest, StaysUnfusedWithTheReason) {
  const RefuseCase& c = GetParam();
  Optimised fused = Optimise(c.graphs, true);
  EXPECT_EQ(FusedNode(*fused.graph), nullptr);
  EXPECT_NE(Rejections(fused.report).find(c.reason), std::string::npos) << Rejections(fused.report);
}

INSTANTIATE_TEST_SUITE_P(
    Casts, RefusedCastsTest,
    ::testing::Values(
        // float32 probabilities rounded to float16 and back.
        RefuseCase{"fp32_probabilities_rounded", {kF32, {}, {kF16, kF32}}, "casts to float16, which rounds the float32"},
        // float32 scores rounded to float16 (and overflowing there) before the softmax.
        RefuseCase{"fp32_scores_rounded", {kF32, {kF16}, {kF32}}, "casts to float16, which rounds the float32"},
        // float16 probabilities through bfloat16 lose 3 bits.
        RefuseCase{"fp16_through_bf16", {kF16, {kF32}, {kBF16, kF16}}, "casts to bfloat16, which rounds the float16"},
        // A scale above 1 on float16 scores: where they overflow depends on where the Cast sits.
        RefuseCase{"fp16_scale_above_one", {kF16, {kF32}, {kF16}, 0.5f}, "float16 scores scaled by a factor above 1"},
        // An additive mask input on float16 scores: the subgraph rounds s + m in float16 (steps of 32 at
        // finfo.min), which decides a row whose every key is hidden.
        RefuseCase{"fp16_additive_mask", {kF16, {kF32}, {kF16}, 2.828427f, false, true}, "additive mask on float16"},
        // bfloat16 s - 1e4 rounds in steps of 64: no explicit additive mask either.
        RefuseCase{"bf16_additive_mask", {kBF16, {kF32}, {kBF16}, 2.828427f, false, true},
                   "additive bfloat16 mask cannot be passed as attn_mask"}),
    [](const ::testing::TestParamInfo<RefuseCase>& info) { return info.param.name; });

// Probabilities cast to an integer type and back are not probabilities any
// more: no attention pattern reads through that Cast.
TEST(MixedPrecisionTest, IntegerCastIsNeverAbsorbed) {
  Optimised fused = Optimise({kF32, {}, {ElementType::kInt32, kF32}}, true);
  EXPECT_EQ(FusedNode(*fused.graph), nullptr);
  EXPECT_EQ(CountOps(*fused.graph, "Softmax"), 1);
}

// float16 scores overflow: a product |q·k| of 65520 or more is ±inf in the
// subgraph's float16 MatMul, so a row that sees a +inf score is NaN (softmax
// of inf - inf) and a -inf score gets weight 0, where float32 would give
// finite numbers. The fused op reads the rows that can reach the limit score
// by score and gives the subgraph's NaN rows; the other entries agree.
TEST(MixedPrecisionTest, Float16ScoreOverflowGivesTheSubgraphsNaNRows) {
  for (bool scale_on_q : {false, true}) {
    const Graphs g{kF16, {kF32}, {kF16}, 4.0f, scale_on_q};
    Optimised fused = Optimise(g, true);
    Optimised unfused = Optimise(g, false);
    ASSERT_NE(FusedNode(*fused.graph), nullptr) << Rejections(fused.report);
    for (int64_t t : {3, 9, 40}) {
      // Entries up to 400: |q·k| typically 8^½ · 400² / 3 = 150000, so most products overflow.
      const std::vector<Tensor> in = Inputs(kF16, t, 400.0f);
      auto want = RunWith(*unfused.graph, in, {"default", AttentionBackend::kAuto, std::nullopt});
      ASSERT_TRUE(want.ok()) << want.status();
      const Comparison self = Compare((*want)[0], (*want)[0]);
      ASSERT_GT(self.nan_both, 0) << "the inputs must make some subgraph rows NaN";
      for (const Backend& b : Backends()) {
        auto got = RunWith(*fused.graph, in, b);
        ASSERT_TRUE(got.ok()) << b.name << ": " << got.status();
        const Comparison c = Compare((*want)[0], (*got)[0]);
        EXPECT_EQ(c.nan_mismatch, 0) << b.name << " T=" << t << " scale_on_q " << scale_on_q;
        EXPECT_EQ(c.nan_both, self.nan_both) << b.name;
        EXPECT_LE(c.max_error, Tolerance(kF16, c.largest)) << b.name << " T=" << t;
      }
    }
  }
}

// LLaMA's causal mask added to float16 scores, with no padding input: a row
// whose every visible score overflowed to -inf weights the keys the mask
// hides by how s + finfo.min rounds in float16 (in steps of 32; -inf below
// -16). The fused op reads the chain at every float16 score and computes
// that row as the subgraph does on every backend; the same op computing it
// in float32 gives another row.
TEST(MixedPrecisionTest, Float16CausalAddedMaskRowsOfOverflowedScores) {
  const Graphs g{kF16, {kF32}, {kF16}, std::sqrt(8.0f), false, false, true};
  Optimised fused = Optimise(g, true);
  Optimised unfused = Optimise(g, false);
  const Node* node = FusedNode(*fused.graph);
  ASSERT_NE(node, nullptr) << Rejections(fused.report);
  ASSERT_EQ(fused.report.fusions.size(), 1u);
  EXPECT_EQ(fused.report.fusions[0].mask, "causal");
  EXPECT_EQ(node->attributes().GetString(mha::kScoreRounding, "").value_or(""), "float16");

  const int64_t t = 6;
  std::vector<Tensor> in = Inputs(kF16, t, 8.0f);
  // Batch 0, head 0: q0·k0 = -90000 overflows to -inf, so row 0 sees no
  // finite score; its hidden keys score 3.2 j (j = 1..5), which s + finfo.min
  // rounds to one value in float16 and float32 keeps apart.
  Float16* q = in[0].data<Float16>();
  Float16* k = in[1].data<Float16>();
  for (int64_t d = 0; d < kHeadDim; ++d) {
    q[d] = FloatToHalf(d == 0 ? 300.0f : 0.0f);
    for (int64_t j = 0; j < t; ++j)
      k[j * kHeadDim + d] = FloatToHalf(d != 0 ? 0.0f : j == 0 ? -300.0f : 0.03f * static_cast<float>(j));
  }
  auto want = RunWith(*unfused.graph, in, {"default", AttentionBackend::kAuto, std::nullopt});
  ASSERT_TRUE(want.ok()) << want.status();
  const Tensor& y = (*want)[0];
  auto row0 = [&](const Tensor& out) {
    std::vector<float> r;
    for (int64_t d = 0; d < kHeadDim; ++d) r.push_back(At(out, d));
    return r;
  };
  const std::vector<float> expected = row0(y);
  for (float x : expected) ASSERT_TRUE(std::isfinite(x)) << "the subgraph's row 0 weights its hidden keys";
  double largest = 0;
  for (float x : expected) largest = std::max<double>(largest, std::fabs(x));
  for (const Backend& b : Backends()) {
    auto got = RunWith(*fused.graph, in, b);
    ASSERT_TRUE(got.ok()) << b.name << ": " << got.status();
    const Comparison c = Compare(y, (*got)[0]);
    EXPECT_EQ(c.nan_mismatch, 0) << b.name;
    EXPECT_LE(c.max_error, Tolerance(kF16, c.largest)) << b.name;
    const std::vector<float> r = row0((*got)[0]);
    for (int64_t d = 0; d < kHeadDim; ++d) EXPECT_LE(std::fabs(r[d] - expected[d]), Tolerance(kF16, largest)) << b.name;
  }
  // Computed in float32, the hidden keys' sums do not round: another row.
  Optimised plain = Optimise(g, true);
  for (Node* n : plain.graph->nodes())
    if (n->op_type() == mha::kOpType)
      for (const char* name : {mha::kScoreRounding, mha::kScoreDivisor, mha::kScoreFloors})
        n->mutable_attributes().Erase(name);
  auto unrounded = RunWith(*plain.graph, in, {"default", AttentionBackend::kAuto, std::nullopt});
  ASSERT_TRUE(unrounded.ok()) << unrounded.status();
  double apart = 0;
  const std::vector<float> u = row0((*unrounded)[0]);
  for (int64_t d = 0; d < kHeadDim; ++d) apart = std::max<double>(apart, std::fabs(u[d] - expected[d]));
  EXPECT_GT(apart, 4 * Tolerance(kF16, largest));
}

// Below the limit nothing changes: the same graph on entries whose products
// stay under 65520 has no NaN anywhere.
TEST(MixedPrecisionTest, Float16ScoresBelowTheLimitStayFinite) {
  const Graphs g{kF16, {kF32}, {kF16}};
  Optimised fused = Optimise(g, true);
  ASSERT_NE(FusedNode(*fused.graph), nullptr) << Rejections(fused.report);
  const std::vector<Tensor> in = Inputs(kF16, 9, 60.0f);  // |q·k| <= 8 · 3600 = 28800
  auto got = RunWith(*fused.graph, in, {"default", AttentionBackend::kAuto, std::nullopt});
  ASSERT_TRUE(got.ok()) << got.status();
  const Comparison c = Compare((*got)[0], (*got)[0]);
  EXPECT_EQ(c.nan_both, 0);
}

}  // namespace
}  // namespace attune::testing
