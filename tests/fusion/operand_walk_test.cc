// The operand walks of the attention rule: each form they look through is a
// pattern, and a form they reach but cannot look through is noted with the
// check that failed; a rejection that follows from what they found carries
// those notes into the fusion report. A perm the walks cannot read is never
// guessed, and never used as an index.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/attention/attention_patterns.h"
#include "engine/passes/attention/attention_rule.h"
#include "engine/passes/attention/operands.h"
#include "engine/passes/pass_manager.h"
#include "engine/passes/passes.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/common/graph_builder.h"

namespace attune::testing {
namespace {

using attention::HeadOperand;
using attention::Perm;
using attention::ResolveOperand;
using attention::ResolveOptions;

const Attributes kHeadsFirst = Attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3}}});

std::string Misses(const HeadOperand& op) { return absl::StrJoin(op.misses, " | "); }

bool HasMiss(const HeadOperand& op, const std::string& text) {
  for (const std::string& m : op.misses)
    if (absl::StrContains(m, text)) return true;
  return false;
}

TEST(OperandWalkTest, AHostilePermIsNotedNotComposed) {
  // The validator refuses this graph; the walk must not index with the perm either.
  GraphBuilder b;
  Value* k = b.Input("k", ElementType::kFloat32, Dims({2, 4, 5, 8}));
  Value* kt = b.Node("Transpose", {k}, Attrs({{"perm", std::vector<int64_t>{127, 7, 1}}}), "k_t");
  kt->set_shape(Dims({2, 4, 8, 5}));
  absl::StatusOr<HeadOperand> op = ResolveOperand(kt, attention::SwapLastTwo(4), 4, {});
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(op->value, nullptr);
  EXPECT_EQ(op->base, kt);  // the operand stays Transpose(k_t, swap), which is exact
  EXPECT_TRUE(HasMiss(*op, "Transpose 'k_t': perm [127, 7, 1] is not a permutation")) << Misses(*op);
  EXPECT_FALSE(attention::ComposePerms({127, 7, 1}, {0, 1, 2}).has_value());
  EXPECT_FALSE(attention::ComposePerms({0, 1, 2}, {127, 7, 1}).has_value());
  EXPECT_FALSE(ResolveOperand(kt, {127, 7, 1, 0}, 4, {}).ok());
  EXPECT_FALSE(ResolveOperand(kt, {0, 1, 2}, 4, {}).ok());
}

TEST(OperandWalkTest, APermThatDoesNotSwapTheLastTwoIsComposed) {
  // Kᵀ = Transpose(K (B, H, T, D), (0, 2, 1, 3)) is no Kᵀ of K, but the walk
  // reads exactly what the MatMul reads: K = Transpose(k, (0, 2, 3, 1)).
  GraphBuilder b;
  Value* k = b.Input("k", ElementType::kFloat32, Dims({2, 4, 5, 8}));
  Value* kt = b.Node("Transpose", {k}, kHeadsFirst, "k_t");
  absl::StatusOr<HeadOperand> op = ResolveOperand(kt, attention::SwapLastTwo(4), 4, {});
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(op->value, nullptr);
  EXPECT_EQ(op->base, k);
  EXPECT_EQ(op->perm, (Perm{0, 2, 3, 1}));
  EXPECT_TRUE(op->misses.empty()) << Misses(*op);
}

// Q = Transpose(Reshape(x (B, T, 64), target), (0, 2, 1, 3)), with the Reshape's output shape unknown.
HeadOperand QThroughReshape(GraphBuilder& b, const std::vector<int64_t>& target) {
  Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", 64}));
  Value* r = b.Node("Reshape", {x, b.Constant("target", Int64s(target))}, {}, "split");
  r->set_shape(std::nullopt);
  Value* q = b.Node("Transpose", {r}, kHeadsFirst, "q_heads");
  absl::StatusOr<HeadOperand> op = ResolveOperand(q, {}, 4, {});
  EXPECT_TRUE(op.ok()) << op.status();
  return op.ok() ? *op : HeadOperand();
}

TEST(OperandWalkTest, AReshapeThatDoesNotSplitHeadsIsNoted) {
  {
    GraphBuilder b;
    HeadOperand op = QThroughReshape(b, {0, 4, -1, 16});
    EXPECT_EQ(op.projection, nullptr);
    EXPECT_TRUE(HasMiss(op, "not a head split: Reshape 'split': target [0, 4, -1, 16] does not keep the batch and "
                            "tokens of 'x' ([batch, seq, 64])"))
        << Misses(op);
  }
  {
    GraphBuilder b;
    HeadOperand op = QThroughReshape(b, {0, 0, 3, 20});
    EXPECT_TRUE(HasMiss(op, "3 heads of 20 do not make the hidden size 64")) << Misses(op);
  }
  {
    GraphBuilder b;
    HeadOperand op = QThroughReshape(b, {0, 0, 4, 16});  // the plain split
    ASSERT_NE(op.projection, nullptr);
    EXPECT_EQ(op.heads, 4);
    EXPECT_EQ(op.head_dim, 16);
    EXPECT_TRUE(op.misses.empty()) << Misses(op);
  }
}

// V (2, 4, 5, 8) = Reshape(Expand(Unsqueeze(v (2, kv_heads, 5, 8), axis))).
Value* RepeatedV(GraphBuilder& b, int64_t kv_heads, int64_t axis) {
  Value* v = b.Input("v", ElementType::kFloat32, Dims({2, kv_heads, 5, 8}));
  Value* u = b.Node("Unsqueeze", {v, b.Constant("axes", Int64s({axis}))}, {}, "v_unsqueeze");
  const SymbolicShape unsqueezed =
      axis == 2 ? Dims({2, kv_heads, 1, 5, 8}) : Dims({2, 1, kv_heads, 5, 8});
  u->set_shape(unsqueezed);
  const int64_t groups = 4 / kv_heads;
  const std::vector<int64_t> expanded =
      axis == 2 ? std::vector<int64_t>{2, kv_heads, groups, 5, 8} : std::vector<int64_t>{2, groups, kv_heads, 5, 8};
  Value* e = b.Node("Expand", {u, b.Constant("expand_shape", Int64s(expanded))}, {}, "v_expand");
  e->set_shape(ShapeFromDims(expanded));
  Value* r = b.Node("Reshape", {e, b.Constant("merge_shape", Int64s({2, 4, 5, 8}))}, {}, "v_repeat");
  r->set_shape(Dims({2, 4, 5, 8}));
  return r;
}

TEST(OperandWalkTest, ARepeatOnTheWrongAxisIsNoted) {
  ResolveOptions kv;
  kv.look_through_repeat = true;
  {
    GraphBuilder b;
    absl::StatusOr<HeadOperand> op = ResolveOperand(RepeatedV(b, 2, 2), {}, 4, kv);
    ASSERT_TRUE(op.ok()) << op.status();
    EXPECT_EQ(op->groups, 2);
    EXPECT_EQ(op->heads, 2);
    EXPECT_TRUE(op->misses.empty()) << Misses(*op);
  }
  {
    // Unsqueeze at axis 1 repeats the heads as a block (h0 h1 h0 h1), not in a row.
    GraphBuilder b;
    absl::StatusOr<HeadOperand> op = ResolveOperand(RepeatedV(b, 2, 1), {}, 4, kv);
    ASSERT_TRUE(op.ok()) << op.status();
    EXPECT_EQ(op->groups, 1);
    EXPECT_EQ(op->heads, 4);
    EXPECT_TRUE(HasMiss(*op, "not a grouped head repeat: Unsqueeze 'v_unsqueeze': axes [1], expected [2]"))
        << Misses(*op);
  }
}

TEST(OperandWalkTest, AConcatOnAnotherAxisIsNoCache) {
  GraphBuilder b;
  Value* past = b.Input("past", ElementType::kFloat32, Dims({2, 4, 3, 8}));
  Value* fresh = b.Input("fresh", ElementType::kFloat32, Dims({2, 4, 3, 8}));
  Value* cat = b.Node("Concat", {past, fresh}, Attrs({{"axis", int64_t{1}}}), "kv_cat");
  cat->set_shape(Dims({2, 8, 3, 8}));
  ResolveOptions kv;
  kv.look_through_past = true;
  absl::StatusOr<HeadOperand> op = ResolveOperand(cat, {}, 4, kv);
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(op->past, nullptr);
  EXPECT_EQ(op->value, cat);
  EXPECT_TRUE(HasMiss(*op, "not a KV-cache Concat: Concat 'kv_cat' joins axis 1, not the tokens (2)")) << Misses(*op);
}

TEST(OperandWalkTest, AMergeThatKeepsTheHeadsFirstIsNoMerge) {
  GraphBuilder b;
  Value* y4 = b.Input("y4", ElementType::kFloat32, Dims({2, 4, 5, 8}));
  Value* t = b.Node("Transpose", {y4}, Attrs({{"perm", std::vector<int64_t>{0, 1, 2, 3}}}), "y_t");
  b.Output(b.Node("Reshape", {t, b.Constant("shape", Int64s({2, 5, 32}))}, {}, "y_merge"));
  absl::StatusOr<attention::HeadMerge> merge = attention::FindHeadMerge(y4, 4, 8);
  ASSERT_FALSE(merge.ok());
  EXPECT_EQ(merge.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(merge.status().message(), "attribute perm is [0, 1, 2, 3], expected [0, 2, 1, 3]"))
      << merge.status();
}

PassContext FusionContext(FusionReport* report) {
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = report;
  return context;
}

std::string Rejections(const FusionReport& report) {
  std::vector<std::string> reasons;
  for (const RejectedCandidate& r : report.rejected) reasons.push_back(r.reason);
  return absl::StrJoin(reasons, " | ");
}

// Falcon-style: one K head that the score MatMul broadcasts, and V's single
// head repeated to every query head through Unsqueeze(`v_axis`) + Expand +
// Reshape. The whole pipeline runs; returns the rejections, "" if it fused.
std::string RejectionsOfOneKeyHead(int64_t v_axis) {
  GraphBuilder b;
  Value* q = b.Input("q", ElementType::kFloat32, Dims({2, 4, 5, 8}));
  Value* k = b.Input("k", ElementType::kFloat32, Dims({2, 1, 5, 8}));
  Value* kt = b.Node("Transpose", {k}, Attrs({{"perm", std::vector<int64_t>{0, 1, 3, 2}}}), "k_t");
  Value* s = b.Node("MatMul", {q, kt}, {}, "scores");
  Value* p = b.Node("Softmax", {s}, Attrs({{"axis", int64_t{-1}}}), "softmax");
  Value* v = RepeatedV(b, 1, v_axis);
  b.Output(b.Node("MatMul", {p, v}, {}, "pv"));
  std::unique_ptr<Graph> graph = b.Build();
  FusionReport report;
  PassContext context = FusionContext(&report);
  const absl::Status run = DefaultPipeline(true)->Run(*graph, context);
  EXPECT_TRUE(run.ok()) << run;
  return CountOps(*graph, "MultiHeadAttention") == 0 ? Rejections(report) : "";
}

TEST(OperandWalkTest, ARefusalCarriesTheWalksNotes) {
  const std::string wrong_axis = RejectionsOfOneKeyHead(1);
  EXPECT_TRUE(absl::StrContains(wrong_axis,
                                "K has 1 heads but V has 4 (V: not a grouped head repeat: Unsqueeze 'v_unsqueeze': "
                                "axes [1], expected [2]"))
      << wrong_axis;
  const std::string repeated = RejectionsOfOneKeyHead(2);
  EXPECT_TRUE(absl::StrContains(repeated,
                                "K has 1 heads but V has 4 (K and V repeat their heads differently (1 and 4 times), "
                                "so neither is read through its repeat)"))
      << repeated;
}

TEST(OperandWalkTest, AnUnreadableKTransposeIsNeverGuessed) {
  // Kᵀ = Transpose(K · c) without a perm over a K of unknown rank: the
  // default perm reverses every dim, so K is not Kᵀ with its last two dims
  // swapped, and the scale-on-Q-and-K form must not read it as such. The
  // scale-on-Q form reads Kᵀ as the MatMul does and fuses exactly.
  GraphBuilder b;
  Value* q = b.Input("q", ElementType::kFloat32, Dims({2, 4, 5, 8}));
  Value* k = b.Input("k", ElementType::kFloat32, Dims({5, 8, 4, 2}));
  Value* v = b.Input("v", ElementType::kFloat32, Dims({2, 4, 5, 8}));
  Value* qs = b.Node("Mul", {q, b.Constant("q_scale", ScalarOf<float>(0.5f))}, {}, "q_scaled");
  Value* ks = b.Node("Mul", {k, b.Constant("k_scale", ScalarOf<float>(0.25f))}, {}, "k_scaled");
  Value* kt = b.Node("Transpose", {ks}, {}, "kt");
  Value* s = b.Node("MatMul", {qs, kt}, {}, "scores");
  Value* p = b.Node("Softmax", {s}, Attrs({{"axis", int64_t{-1}}}), "softmax");
  Value* y = b.Node("MatMul", {p, v}, {}, "pv");
  b.Output(y);
  std::unique_ptr<Graph> graph = b.Build();
  k->set_shape(std::nullopt);
  ks->set_shape(std::nullopt);
  qs->set_shape(Dims({2, 4, 5, 8}));
  kt->set_shape(Dims({2, 4, 8, 5}));
  for (Value* x : {s, p}) x->set_shape(Dims({2, 4, 5, 5}));
  y->set_shape(Dims({2, 4, 5, 8}));

  FusionReport report;
  PassContext context = FusionContext(&report);
  attention::AttentionVariant both{attention::ScalePlace::kQueryAndKey, attention::MaskForm::kNone};
  // Every way the pattern matches (Q's Mul is commutative) is checked; one of them reaches K.
  std::vector<std::string> reasons;
  pattern::MatchResult r = pattern::MatchValue(
      attention::AttentionPattern(both), y, [&](const pattern::Match& m) -> std::optional<std::string> {
        auto result = attention::CheckAttention(*graph, m, both, context);
        if (auto* reason = std::get_if<std::string>(&result)) {
          reasons.push_back(*reason);
          return *reason;
        }
        return std::nullopt;
      });
  EXPECT_FALSE(r.matched);
  const std::string all = absl::StrJoin(reasons, " | ");
  EXPECT_TRUE(absl::StrContains(all, "cannot read K through Transpose 'kt': no perm, and the input's rank is unknown"))
      << all;

  std::unique_ptr<Graph> unfused = graph->Clone();
  ASSERT_TRUE(MakeAttentionFusionPass()->Run(*graph, context).ok());
  ASSERT_EQ(report.fusions.size(), 1u) << Rejections(report);
  EXPECT_EQ(report.fusions[0].pattern, "attention[scale=query, mask=none]");

  std::vector<Tensor> inputs;
  for (const auto& shape : {std::vector<int64_t>{2, 4, 5, 8}, std::vector<int64_t>{5, 8, 4, 2},
                            std::vector<int64_t>{2, 4, 5, 8}}) {
    Tensor t = *Tensor::Create(ElementType::kFloat32, shape);
    float* d = t.data<float>();
    for (int64_t i = 0; i < t.num_elements(); ++i) d[i] = static_cast<float>((i * 37) % 11) / 7.0f - 0.6f;
    inputs.push_back(std::move(t));
  }
  auto want = RunGraph(*unfused, DefaultKernelRegistry(), inputs);
  auto got = RunGraph(*graph, DefaultKernelRegistry(), inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ((*got)[0].num_elements(), (*want)[0].num_elements());
  for (int64_t i = 0; i < (*want)[0].num_elements(); ++i)
    EXPECT_NEAR((*got)[0].data<float>()[i], (*want)[0].data<float>()[i], 1e-5) << i;
}

}  // namespace
}  // namespace attune::testing
