// A scale on Q's projection before the head split (Hugging Face OPT, BART,
// Whisper: q_proj(h) * head_dim ** -0.5) becomes the fused op's scale when the
// split alone reads it; read elsewhere, it stays a Mul and the fused op's
// scale is 1. Either way the fused graph gives the unfused graph's outputs.
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/common/compare.h"
#include "tests/common/graph_builder.h"
#include "tests/common/torch_export_graphs.h"
#include "tests/fusion/fuse_and_compare.h"

namespace attune::testing {
namespace {

constexpr ElementType kF32 = ElementType::kFloat32;
constexpr int64_t kHeads = 2, kHeadDim = 4, kModel = kHeads * kHeadDim;

enum class ScaleOp { kMul, kDiv, kMulReadTwice };

// x (2, 5, 8) -> attention without mask, Q scaled before its split.
std::unique_ptr<Graph> PreScaledAttention(ScaleOp op) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({2, 5, kModel}));
  auto project = [&](const char* name, uint32_t seed) {
    return b.Node("MatMul", {x, b.Constant(std::string("W") + name, PseudoRandom({kModel, kModel}, seed))});
  };
  auto split = [&](Value* t) {
    Value* r = b.Node("Reshape", {t, b.Constant("split", Int64s({0, 0, kHeads, kHeadDim}))});
    return b.Node("Transpose", {r}, Attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
  };
  Value* q = project("q", 1);
  Value* scaled = op == ScaleOp::kDiv ? b.Node("Div", {q, b.Constant("c", ScalarOf<float>(2.0f))})
                                      : b.Node("Mul", {b.Constant("c", ScalarOf<float>(0.5f)), q});
  Value* q4 = split(scaled);
  Value* k4 = split(project("k", 2));
  Value* v4 = split(project("v", 3));
  Value* kt = b.Node("Transpose", {k4}, Attrs({{"perm", std::vector<int64_t>{0, 1, 3, 2}}}));
  Value* p = b.Node("Softmax", {b.Node("MatMul", {q4, kt})}, Attrs({{"axis", int64_t{-1}}}));
  Value* o = b.Node("Transpose", {b.Node("MatMul", {p, v4})}, Attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
  b.Output(b.Node("Reshape", {o, b.Constant("merge", Int64s({0, 0, kModel}))}));
  if (op == ScaleOp::kMulReadTwice) b.Output(b.Node("Relu", {scaled}));
  return b.Build();
}

FusedComparison FuseAndCompare(ScaleOp op) {
  return testing::FuseAndCompare(PreScaledAttention(op), {PseudoRandom({2, 5, kModel}, 9)});
}

TEST(PreSplitScale, BecomesTheFusedScale) {
  for (ScaleOp op : {ScaleOp::kMul, ScaleOp::kDiv}) {
    FusedComparison r = FuseAndCompare(op);
    ASSERT_EQ(r.report.fusions.size(), 1u);
    EXPECT_FLOAT_EQ(r.report.fusions[0].scale, 0.5f);
    EXPECT_EQ(r.report.fusions[0].q_layout, "BTC");
    EXPECT_LT(r.error, 1e-5);
  }
}

TEST(PreSplitScale, StaysAMulWhenReadElsewhere) {
  FusedComparison r = FuseAndCompare(ScaleOp::kMulReadTwice);
  ASSERT_EQ(r.report.fusions.size(), 1u);
  EXPECT_FLOAT_EQ(r.report.fusions[0].scale, 1.0f);
  EXPECT_LT(r.error, 1e-5);
}

}  // namespace
}  // namespace attune::testing
