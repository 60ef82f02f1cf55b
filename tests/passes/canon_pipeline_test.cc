// The Simplify stage end to end on a graph written exactly as torch.onnx
// exports the course's multi-head attention: what is left, and that the
// optimised graph computes the same outputs.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "engine/passes/passes.h"
#include "tests/common/graph_builder.h"
#include "tests/common/torch_export_graphs.h"
#include "tests/passes/canon_test_util.h"

namespace attune::testing {
namespace {

absl::Status Simplify(Graph& graph) {
  auto pipeline = DefaultPipeline(/*fuse=*/false);
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  return pipeline->Run(graph, context);
}

void ExpectSameOutputs(const Graph& original, const Graph& optimised, int64_t batch, int64_t seq, int64_t d_model) {
  Tensor x = PseudoRandom({batch, seq, d_model}, 77);
  auto expected = RunGraph(original, DefaultKernelRegistry(), {x});
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto actual = RunGraph(optimised, DefaultKernelRegistry(), {x});
  ASSERT_TRUE(actual.ok()) << actual.status();
  ASSERT_EQ((*actual)[0].shape(), (*expected)[0].shape());
  const auto e = (*expected)[0].values<float>();
  const auto a = (*actual)[0].values<float>();
  for (size_t i = 0; i < e.size(); ++i) ASSERT_NEAR(a[i], e[i], 1e-5f * (1.f + std::fabs(e[i]))) << "at " << i;
}

// The nodes left in the Where's and Div's inputs after canonicalisation.
TEST(CanonPipeline, TorchMultiHeadAttentionIsCanonical) {
  auto graph = TorchMultiHeadAttentionGraph();
  auto original = graph->Clone();
  const int before = graph->num_nodes();
  ASSERT_TRUE(Simplify(*graph).ok());
  EXPECT_LT(graph->num_nodes(), before);

  // Every Reshape has a constant target with 0 (copy) for batch and seq.
  std::vector<std::vector<int64_t>> targets;
  for (const Node* n : graph->nodes()) {
    if (n->op_type() != "Reshape") continue;
    ASSERT_TRUE(n->input(1)->is_constant()) << n->Describe();
    const auto v = n->input(1)->constant()->values<int64_t>();
    targets.emplace_back(v.begin(), v.end());
  }
  ASSERT_EQ(targets.size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(targets[i], std::vector<int64_t>({0, 0, 4, 16}));
  EXPECT_EQ(targets[3], std::vector<int64_t>({0, 0, 64}));

  // K.size(-1) ** 0.5 is the constant 4.
  EXPECT_EQ(CountOps(*graph, "Pow"), 0);
  EXPECT_EQ(CountOps(*graph, "Squeeze"), 0);
  EXPECT_EQ(CountOps(*graph, "Constant"), 0);
  for (const Node* n : graph->nodes()) {
    if (n->op_type() != "Div") continue;
    ASSERT_TRUE(n->input(1)->is_constant());
    EXPECT_FLOAT_EQ(*n->input(1)->constant()->data<float>(), 4.f);
  }
  // The mask slicing by sequence length stays (one shared Shape -> Gather -> Unsqueeze chain).
  EXPECT_EQ(CountOps(*graph, "Shape"), 1);
  EXPECT_EQ(CountOps(*graph, "Gather"), 1);
  EXPECT_EQ(CountOps(*graph, "Unsqueeze"), 1);
  EXPECT_EQ(CountOps(*graph, "Slice"), 2);
  // Shapes are symbolic all the way down.
  for (const Node* n : graph->nodes())
    if (n->op_type() == "Softmax") EXPECT_EQ(ShapeOf(n->output(0)), "[batch, 4, seq, seq]");
  for (const Node* n : graph->nodes())
    if (n->op_type() == "Add") EXPECT_EQ(ShapeOf(n->output(0)), "[batch, seq, 64]");

  ExpectSameOutputs(*original, *graph, 2, 5, 64);
  ExpectSameOutputs(*original, *graph, 1, 1, 64);
}

TEST(CanonPipeline, EveryPassIsIdempotentAfterThePipeline) {
  auto graph = TorchMultiHeadAttentionGraph();
  ASSERT_TRUE(Simplify(*graph).ok());
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(MakeConstantFoldingPass());
  passes.push_back(MakeShapeInferencePass());
  passes.push_back(MakeShapeFoldingPass());
  passes.push_back(MakeCommonSubexpressionPass());
  passes.push_back(MakeDeadCodePass());
  for (auto& pass : passes) {
    auto changed = RunPass(*pass, *graph);
    ASSERT_TRUE(changed.ok()) << pass->name() << ": " << changed.status();
    EXPECT_FALSE(*changed) << pass->name() << " changed an already simplified graph";
  }
}

TEST(CanonPipeline, ConstantScaleVariantGivesTheSameGraphShape) {
  // Whether the exporter computed the scale from K's shape or wrote a
  // constant, the simplified graphs have the same op histogram.
  TorchMhaOptions shape_scale;
  TorchMhaOptions constant_scale;
  constant_scale.scale_from_shape = false;
  auto a = TorchMultiHeadAttentionGraph(shape_scale);
  auto b = TorchMultiHeadAttentionGraph(constant_scale);
  ASSERT_TRUE(Simplify(*a).ok());
  ASSERT_TRUE(Simplify(*b).ok());
  EXPECT_EQ(OpHistogram(*a), OpHistogram(*b));
}

TEST(CanonPipeline, StaticShapesFoldEverythingButTheMath) {
  // With batch and seq fixed, even the mask slicing folds.
  GraphBuilder b;
  Value* x = b.Input("x", ElementType::kFloat32, Dims({2, 7, 64}));
  b.Output(AddTorchMultiHeadAttention(b, x));
  auto original = b.graph().Clone();
  ASSERT_TRUE(Simplify(b.graph()).ok());
  for (const char* op : {"Shape", "Gather", "Unsqueeze", "Concat", "Slice", "Cast", "Constant"})
    EXPECT_EQ(CountOps(b.graph(), op), 0) << op;
  ExpectSameOutputs(*original, b.graph(), 2, 7, 64);
}

}  // namespace
}  // namespace attune::testing
