// Attention on heads merged into the batch (bmm on (B*H, T, D), viewed back to
// (B, H, T, S) for the mask) fuses once unmerge_heads has computed it on the
// 4-D heads; with BLOOM's ALiBi bias added to the merged scores it must not
// fuse as plain causal: the bias stays an Add of the 4-D scores and the mask
// proof names it; heads folded into the query axis (GPTBigCode) are reported.
#include <iostream>

#include "absl/strings/match.h"
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
constexpr int64_t kB = 2, kH = 2, kT = 5, kD = 4, kModel = kH * kD;

// Inputs x (B, T, C)[, alibi (B, H, T)]; causal Where(bool buffer, finfo.min).
std::unique_ptr<Graph> MergedHeadsBlock(bool alibi) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({kB, kT, kModel}));
  auto reshape = [&](Value* t, std::vector<int64_t> shape) {
    return b.Node("Reshape", {t, b.Constant("shape", Int64s(shape))});
  };
  auto heads = [&](const char* name, uint32_t seed) {  // (B, H, T, D) merged to (B*H, T, D)
    Value* p = b.Node("MatMul", {x, b.Constant(std::string("W") + name, PseudoRandom({kModel, kModel}, seed))});
    Value* t = b.Node("Transpose", {reshape(p, {0, 0, kH, kD})}, Attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
    return reshape(t, {-1, kT, kD});
  };
  Value* q = heads("q", 1);
  Value* k = heads("k", 2);
  Value* v = heads("v", 3);
  Value* kt = b.Node("Transpose", {k}, Attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}));
  Value* s = b.Node("Mul", {b.Node("MatMul", {q, kt}), b.Constant("alpha", ScalarOf<float>(0.5f))});
  if (alibi) s = b.Node("Add", {s, reshape(b.Input("alibi", kF32, Dims({kB, kH, kT})), {kB * kH, 1, kT})});
  Tensor hidden = *Tensor::Create(ElementType::kBool, {kT, kT});
  for (int64_t i = 0; i < kT; ++i)
    for (int64_t j = 0; j < kT; ++j) hidden.data<bool>()[i * kT + j] = j > i;
  Value* mask = b.Constant("causal", std::move(hidden));
  Value* masked = b.Node("Where", {mask, b.Constant("fill", ScalarOf<float>(-3.4028234663852886e38f)),
                                   reshape(s, {kB, kH, kT, kT})});
  Value* p = b.Node("Softmax", {reshape(masked, {kB * kH, kT, kT})}, Attrs({{"axis", int64_t{-1}}}));
  Value* o = reshape(b.Node("MatMul", {p, v}), {kB, kH, kT, kD});
  o = b.Node("Transpose", {o}, Attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
  b.Output(reshape(o, {0, 0, kModel}));
  return b.Build();
}

FusedComparison FuseAndCompare(bool alibi) {
  std::vector<Tensor> inputs = {PseudoRandom({kB, kT, kModel}, 7)};
  if (alibi) inputs.push_back(PseudoRandom({kB, kH, kT}, 8));
  FusedComparison r = testing::FuseAndCompare(MergedHeadsBlock(alibi), inputs);
  for (const RejectedCandidate& c : r.report.rejected) std::cout << "  rejected " << c.pattern << ": " << c.reason << "\n";
  return r;
}

TEST(MergedHeads, FusesAsCausalWithTheHeadsAndScale) {
  FusedComparison r = FuseAndCompare(false);
  ASSERT_EQ(r.report.fusions.size(), 1u);
  const FusionRecord& f = r.report.fusions[0];
  EXPECT_EQ(f.mask, "causal");
  EXPECT_EQ(f.num_heads, kH);
  EXPECT_EQ(f.head_dim, kD);
  EXPECT_FLOAT_EQ(f.scale, 0.5f);
  EXPECT_LT(r.error, 1e-5);
}

TEST(MergedHeads, AnAlibiBiasNeverFusesAsPlainCausal) {
  FusedComparison r = FuseAndCompare(true);
  for (const FusionRecord& f : r.report.fusions) EXPECT_NE(f.mask, "causal");
  bool named = false;
  // A bias read from an input is named as such; one computed in the graph
  // (BLOOM's build_alibi_tensor) is "a bias, not a mask".
  for (const RejectedCandidate& c : r.report.rejected)
    named |= absl::StrContains(c.reason, "'alibi'") || absl::StrContains(c.reason, "a bias, not a mask");
  // With the position-bias fusion it fuses with the bias as its own input.
  for (const FusionRecord& f : r.report.fusions) named |= absl::EndsWith(f.mask, "+bias") && !f.bias.empty();
  EXPECT_TRUE(named);
  EXPECT_LT(r.error, 1e-5);
}

// GPTBigCode's multi-query form folds the heads into the query axis: q viewed
// (B, T*H, D) times one K head (B, D, S), the scores viewed (B, T, H, S) for
// the softmax and back to (B, T*H, S) for P·V. unfold_query_heads computes it
// on (B, H, T, ·) heads, and it fuses with one K/V head.
TEST(MergedHeads, HeadsFoldedIntoTheQueryAxisFuseWithOneKeyValueHead) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({kB, kT, kModel}));
  auto reshape = [&](Value* t, std::vector<int64_t> shape) {
    return b.Node("Reshape", {t, b.Constant("shape", Int64s(shape))});
  };
  Value* q = reshape(b.Node("MatMul", {x, b.Constant("Wq", PseudoRandom({kModel, kModel}, 1))}), {kB, kT * kH, kD});
  Value* k = b.Node("MatMul", {x, b.Constant("Wk", PseudoRandom({kModel, kD}, 2))});
  Value* v = b.Node("MatMul", {x, b.Constant("Wv", PseudoRandom({kModel, kD}, 3))});
  Value* kt = b.Node("Transpose", {k}, Attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}));
  Value* s = reshape(b.Node("Mul", {b.Node("MatMul", {q, kt}), b.Constant("alpha", ScalarOf<float>(0.5f))}),
                     {kB, kT, kH, kT});
  Value* p = b.Node("Softmax", {s}, Attrs({{"axis", int64_t{-1}}}));
  b.Output(reshape(b.Node("MatMul", {reshape(p, {kB, kT * kH, kT}), v}), {kB, kT, kModel}));
  FusedComparison r = testing::FuseAndCompare(b.Build(), {PseudoRandom({kB, kT, kModel}, 7)});
  ASSERT_EQ(r.report.fusions.size(), 1u);
  EXPECT_EQ(r.report.fusions[0].num_heads, kH);
  EXPECT_EQ(r.report.fusions[0].kv_num_heads, 1);
  EXPECT_EQ(r.report.fusions[0].head_dim, kD);
  EXPECT_FLOAT_EQ(r.report.fusions[0].scale, 0.5f);
  EXPECT_TRUE(r.report.rejected.empty());
  EXPECT_LT(r.error, 1e-5);
}

}  // namespace
}  // namespace attune::testing
