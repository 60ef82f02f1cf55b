// Verify mode compares a planned rewrite with the subgraph it replaces at
// sequence lengths beyond the lengths it is given (the replaced mask's
// windows and constant offsets): a rewrite that differs only beyond 16
// positions passes at the short sizes and fails at the long one. It also
// injects NaN and infinities into what the plan reads: a rewrite equal on
// finite values that turns NaN into 0 is caught there.
#include <limits>

#include "engine/exec/plan_evaluator.h"
#include "engine/rewrite/verify_rewrite.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/common/graph_builder.h"

namespace attune::testing {
namespace {


// y = Identity(x) for x [batch, seq, 4], and a plan that replaces y with
// x[:, :16] next to 2 * x[:, 16:]: equal to y only while seq <= 16.
struct Differs {
  std::unique_ptr<Graph> graph;
  RewritePlan plan;
  Differs() {
    GraphBuilder b(17);
    Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", 4}));
    b.Output(b.Node("Identity", {x}, {}, "y"));
    graph = b.Build();
    auto constant = [&](const std::string& key, Tensor t) {
      plan.values.push_back({key, key, t.type(), std::nullopt, std::move(t)});
      return "$" + key;
    };
    const std::string z = constant("z", Int64s({0})), at = constant("at", Int64s({16}));
    const std::string end = constant("end", Int64s({std::numeric_limits<int64_t>::max()}));
    const std::string axis = constant("axis", Int64s({1}));
    const std::string two = constant("two", ScalarOf<float>(2.0f));
    const std::string head = plan.AddValue("head", "head", ElementType::kFloat32, std::nullopt);
    const std::string tail = plan.AddValue("tail", "tail", ElementType::kFloat32, std::nullopt);
    const std::string twice = plan.AddValue("twice", "twice", ElementType::kFloat32, std::nullopt);
    const std::string y = plan.AddValue("y2", "y2", ElementType::kFloat32, std::nullopt);
    const std::string x_name = graph->inputs()[0]->name();
    plan.nodes.push_back({"Slice", "", "head", {x_name, z, at, axis}, {head}, {}});
    plan.nodes.push_back({"Slice", "", "tail", {x_name, at, end, axis}, {tail}, {}});
    plan.nodes.push_back({"Mul", "", "twice", {tail, two}, {twice}, {}});
    PlannedNode concat{"Concat", "", "joined", {head, twice}, {y}, {}};
    concat.attributes.Set("axis", int64_t{1});
    plan.nodes.push_back(std::move(concat));
    plan.replace.emplace_back(graph->outputs()[0]->name(), y);
  }
};

TEST(VerifyLengthTest, ComparesBeyondTheGivenLengths) {
  Differs d;
  auto short_only = VerifyRewritePlan(*d.graph, d.plan, DefaultSubgraphEvaluator(), {});
  ASSERT_TRUE(short_only.ok()) << short_only.status();
  EXPECT_EQ(short_only->max_abs, 0.0) << "the short sizes (11, 3) do not reach position 16";
  EXPECT_EQ(short_only->longest_sequence, 11);

  auto beyond = VerifyRewritePlan(*d.graph, d.plan, DefaultSubgraphEvaluator(), {}, {19});
  ASSERT_TRUE(beyond.ok()) << beyond.status();
  EXPECT_GT(beyond->max_abs, 0.0);
  EXPECT_EQ(beyond->longest_sequence, 19);
}

// y = Identity(x), replaced by Where(IsNaN(x), 0, x) (`guarded`) or x + 0.
struct NaNRewrite {
  std::unique_ptr<Graph> graph;
  RewritePlan plan;
  explicit NaNRewrite(bool guarded) {
    GraphBuilder b(17);
    Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", 4}));
    b.Output(b.Node("Identity", {x}, {}, "y"));
    graph = b.Build();
    plan.values.push_back({"zero", "zero", ElementType::kFloat32, std::nullopt, ScalarOf<float>(0.0f)});
    const std::string x_name = graph->inputs()[0]->name();
    const std::string y = plan.AddValue("y2", "y2", ElementType::kFloat32, std::nullopt);
    if (guarded) {
      const std::string nan = plan.AddValue("isnan", "isnan", ElementType::kBool, std::nullopt);
      plan.nodes.push_back({"IsNaN", "", "isnan", {x_name}, {nan}, {}});
      plan.nodes.push_back({"Where", "", "guard", {nan, "$zero", x_name}, {y}, {}});
    } else {
      plan.nodes.push_back({"Add", "", "plus_zero", {x_name, "$zero"}, {y}, {}});
    }
    plan.replace.emplace_back(graph->outputs()[0]->name(), y);
  }
};

TEST(VerifyNonFiniteTest, ARewriteThatLosesANaNIsCaught) {
  NaNRewrite d(true);
  auto errors = VerifyRewritePlan(*d.graph, d.plan, DefaultSubgraphEvaluator(), {});
  ASSERT_TRUE(errors.ok()) << errors.status();
  EXPECT_EQ(errors->max_abs, 0.0) << "equal on finite inputs";
  EXPECT_TRUE(errors->nonfinite_checked);
  EXPECT_NE(errors->nonfinite_mismatch.find("is nan unfused but 0 fused"), std::string::npos)
      << errors->nonfinite_mismatch;
}

TEST(VerifyNonFiniteTest, ARewriteThatKeepsNaNAndInfinitiesPasses) {
  NaNRewrite d(false);
  auto errors = VerifyRewritePlan(*d.graph, d.plan, DefaultSubgraphEvaluator(), {});
  ASSERT_TRUE(errors.ok()) << errors.status();
  EXPECT_TRUE(errors->nonfinite_checked);
  EXPECT_EQ(errors->nonfinite_mismatch, "");
}

}  // namespace
}  // namespace attune::testing
