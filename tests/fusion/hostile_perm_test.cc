// A Transpose perm that is not a permutation of its input's rank, on the path
// the attention rule reads (Q, K and V head splits, K's transpose): the
// validator refuses the graph with one line naming node, op and attribute,
// before any pass could index with the perm.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/fusion/attention_graphs.h"

namespace attune::testing {
namespace {

struct PermCase {
  std::string node;  // the Transpose to break
  std::vector<int64_t> perm;
  bool k_pretransposed = false;
  bool single_head = false;
};

absl::Status Optimise(Graph& graph) {
  FusionReport report;
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = &report;
  return DefaultPipeline(true)->Run(graph, context);
}

class HostilePermTest : public ::testing::TestWithParam<PermCase> {};

TEST_P(HostilePermTest, RefusedBeforeAnyPass) {
  const PermCase& c = GetParam();
  AttentionGraphSpec spec;
  spec.k_pretransposed = c.k_pretransposed;
  spec.single_head = c.single_head;
  std::unique_ptr<Graph> graph = BuildAttentionGraph(spec);
  Node* t = graph->FindNode(c.node);
  ASSERT_NE(t, nullptr) << c.node;
  ASSERT_EQ(t->op_type(), "Transpose");
  t->mutable_attributes().Set("perm", c.perm);

  const absl::Status s = Optimise(*graph);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  const std::string message(s.message());
  EXPECT_TRUE(absl::StrContains(message, "Transpose '" + c.node + "'")) << message;
  EXPECT_TRUE(absl::StrContains(message, "attribute perm")) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// The same graphs with their own perms pass the validator and fuse.
TEST(HostilePermTest, UntouchedGraphsFuse) {
  for (bool pretransposed : {false, true}) {
    AttentionGraphSpec spec;
    spec.k_pretransposed = pretransposed;
    std::unique_ptr<Graph> graph = BuildAttentionGraph(spec);
    ASSERT_TRUE(Optimise(*graph).ok());
    EXPECT_EQ(CountOps(*graph, "MultiHeadAttention"), 1);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Perms, HostilePermTest,
    ::testing::Values(PermCase{"k_t", {127, 7, 1}, true}, PermCase{"k_t", {7, 2, 3, 1}, true},
                      PermCase{"k_t", {0, 1, 5}, true}, PermCase{"k_t", {0, 2, 2, 1}, true},
                      PermCase{"k_t", {0, 1, 3, -2}, false}, PermCase{"q_heads", {0, 2, 1, 9}},
                      PermCase{"v_heads", {127, 7, 1}}, PermCase{"k_heads", {0, 0, 1, 3}},
                      // A permutation, but of rank 3 for a rank-4 input: known only once shapes are inferred.
                      PermCase{"q_heads", {0, 2, 1}}, PermCase{"k_t", {1, 0}, true}),
    [](const ::testing::TestParamInfo<PermCase>& info) { return absl::StrCat(info.param.node, "_", info.index); });

}  // namespace
}  // namespace attune::testing
