// A graph that is a shape error unfused must stay one fused: Q with 8 heads
// against K and V with 2 heads and no repeat step cannot broadcast in the
// Q·Kᵀ MatMul, so it is not grouped-query attention. And the broadcasts the
// MatMuls do allow (one K/V head for every query head) still fuse.
#include <iostream>

#include "absl/strings/match.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/common/compare.h"
#include "tests/fusion/attention_graphs.h"

namespace attune::testing {
namespace {

using Spec = AttentionGraphSpec;

struct Optimised {
  std::unique_ptr<Graph> graph;
  FusionReport report;
  absl::Status status;
};

Optimised Optimise(const Spec& spec, bool fuse) {
  Optimised r;
  r.graph = BuildAttentionGraph(spec);
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = &r.report;
  context.verify_fusion = fuse;
  r.status = DefaultPipeline(fuse)->Run(*r.graph, context);
  return r;
}

TEST(ShapeErrorTest, HeadsThatCannotBroadcastAreNotGroupedQueryAttention) {
  Spec spec;
  spec.heads = 8;
  spec.kv_heads = 2;
  spec.repeat = Spec::Repeat::kNone;
  Optimised unfused = Optimise(spec, false);
  Optimised fused = Optimise(spec, true);
  ASSERT_EQ(unfused.status.ok(), fused.status.ok()) << unfused.status << " / " << fused.status;
  if (!fused.status.ok()) return;  // refused before running, the same way both times
  EXPECT_EQ(CountOps(*fused.graph, "MultiHeadAttention"), 0);
  bool explained = false;
  for (const RejectedCandidate& r : fused.report.rejected) {
    std::cout << "  rejected " << r.pattern << ": " << r.reason << "\n";
    explained |= absl::StrContains(r.reason, "cannot broadcast dim 1 of Q (8) and of K^T (2)");
  }
  EXPECT_TRUE(explained);
  for (int64_t t : {1, 5}) {
    auto a = RunGraph(*unfused.graph, DefaultKernelRegistry(), AttentionGraphInputs(spec, t, 0));
    auto b = RunGraph(*fused.graph, DefaultKernelRegistry(), AttentionGraphInputs(spec, t, 0));
    EXPECT_FALSE(a.ok()) << "the unfused graph must fail at T=" << t;
    EXPECT_FALSE(b.ok()) << "the fused graph must fail at T=" << t;
    if (!a.ok() && !b.ok()) EXPECT_EQ(a.status().code(), b.status().code()) << a.status() << " / " << b.status();
  }
}

// One K/V head that the MatMul broadcasts to every query head (no repeat
// step) is multi-query attention, and fuses as such.
TEST(ShapeErrorTest, OneKvHeadBroadcastByTheMatMulFuses) {
  Spec spec;
  spec.heads = 4;
  spec.kv_heads = 1;
  spec.repeat = Spec::Repeat::kNone;
  Optimised unfused = Optimise(spec, false);
  Optimised fused = Optimise(spec, true);
  ASSERT_TRUE(unfused.status.ok()) << unfused.status;
  ASSERT_TRUE(fused.status.ok()) << fused.status;
  for (const RejectedCandidate& r : fused.report.rejected) std::cout << "  rejected " << r.pattern << ": " << r.reason << "\n";
  ASSERT_EQ(CountOps(*fused.graph, "MultiHeadAttention"), 1);
  EXPECT_EQ(fused.report.fusions[0].kv_num_heads, 1);
  for (int64_t t : {1, 6, 13}) {
    auto a = RunGraph(*unfused.graph, DefaultKernelRegistry(), AttentionGraphInputs(spec, t, 0));
    auto b = RunGraph(*fused.graph, DefaultKernelRegistry(), AttentionGraphInputs(spec, t, 0));
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_LE(MaxAbsDifference((*a)[0], (*b)[0]), 1e-5) << "T=" << t;
  }
}

}  // namespace
}  // namespace attune::testing
