// unfold_query_heads: GPTBigCode's multi-query attention, the query heads
// folded into the query axis, is computed on (B, H, T, ·) heads with the same
// elements; a block whose dims, readers or ops do not prove it a relabelling
// is left as it is, and reported when the folded form is there.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/passes/passes.h"
#include "ops/registry.h"
#include "tests/common/compare.h"
#include "tests/common/graph_builder.h"
#include "tests/common/torch_export_graphs.h"
#include "tests/passes/canon_test_util.h"

namespace attune::testing {
namespace {

constexpr ElementType kF32 = ElementType::kFloat32;
constexpr int64_t kB = 2, kH = 3, kT = 5, kS = 7, kD = 4;

struct BlockOptions {
  bool probs_also_output = false;   // the 4-D probabilities are a graph output too
  int64_t softmax_axis = -1;        // over the last axis, or another
  bool mask_per_head = false;       // an additive (1, 1, H, S) mask: it varies along the head axis
  bool scores_times_input = false;  // the 3-D scores times a (B, T*H, S) input: no scale
  bool key_rank2 = false;           // one key (D, S) and value (S, D) for the whole batch
  bool zeros_base = false;          // torch.baddbmm(zeros(B, T*H, S), q, k, beta=1): + ConstantOfShape(0)
};

Value* ReshapeTo(GraphBuilder& b, Value* x, std::vector<int64_t> shape) {
  return b.Node("Reshape", {x, b.Constant("shape", Int64s(shape))});
}

// GPTBigCode's form: q (B, T, H*D) viewed (B, T*H, D), MatMul with k (B, D, S)
// times 0.5, viewed (B, T, H, S), Where(mask (B, T, 1, S), w, min), Softmax,
// viewed (B, T*H, S), MatMul with v (B, S, D), viewed (B, T, H*D).
std::unique_ptr<Graph> FoldedBlock(const BlockOptions& o, int opset = 17) {
  GraphBuilder b(opset);
  Value* q = b.Input("q", kF32, Dims({kB, kT, kH * kD}));
  Value* k = o.key_rank2 ? b.Input("k", kF32, Dims({kD, kS})) : b.Input("k", kF32, Dims({kB, kD, kS}));
  Value* v = o.key_rank2 ? b.Input("v", kF32, Dims({kS, kD})) : b.Input("v", kF32, Dims({kB, kS, kD}));
  Value* mask = b.Input("mask", ElementType::kBool, Dims({kB, kT, 1, kS}));
  Value* q3 = ReshapeTo(b, q, {kB, kT * kH, kD});
  Value* s = b.Node("Mul", {b.Node("MatMul", {q3, k}), b.Constant("alpha", ScalarOf<float>(0.5f))});
  if (o.zeros_base) {
    Value* base = b.Node("ConstantOfShape", {b.Constant("base_shape", Int64s({kB, kT * kH, kS}))},
                         Attrs({{"value", Floats({1}, {0.0f})}}));
    s = b.Node("Add", {s, base});
  }
  if (o.scores_times_input) s = b.Node("Mul", {s, b.Input("gain", kF32, Dims({kB, kT * kH, kS}))});
  Value* s4 = ReshapeTo(b, s, {kB, kT, kH, kS});
  Value* masked = b.Node("Where", {mask, s4, b.Constant("min", ScalarOf<float>(std::numeric_limits<float>::lowest()))});
  if (o.mask_per_head) masked = b.Node("Add", {masked, b.Input("head_bias", kF32, Dims({1, 1, kH, kS}))});
  Value* p = b.Node("Softmax", {masked}, Attrs({{"axis", o.softmax_axis}}));
  Value* out = ReshapeTo(b, b.Node("MatMul", {ReshapeTo(b, p, {kB, kT * kH, kS}), v}), {kB, kT, kH * kD});
  b.Output(out);
  if (o.probs_also_output) b.Output(p);
  return BuildWithShapes(b, *MakeShapeInferencePass());
}

// Scores with a NaN and an Inf in them, a mask that hides one query's every key.
std::vector<Tensor> BlockInputs(const Graph& graph) {
  std::vector<Tensor> inputs;
  uint32_t seed = 1;
  for (const Value* in : graph.inputs()) {
    const std::vector<int64_t> shape = StaticDims(in);
    if (in->type() == ElementType::kBool) {
      Tensor mask = *Tensor::Create(ElementType::kBool, shape);
      for (int64_t i = 0; i < mask.num_elements(); ++i) mask.data<bool>()[i] = (i % kS) <= ((i / kS) % kT) + 1;
      for (int64_t j = 0; j < kS; ++j) mask.data<bool>()[2 * kS + j] = false;  // query 2 of batch 0: no key
      inputs.push_back(std::move(mask));
    } else {
      Tensor t = PseudoRandom(shape, seed++);
      if (in->name() == "q") {
        t.data<float>()[kH * kD + 1] = std::numeric_limits<float>::quiet_NaN();  // query 1, head 0
        t.data<float>()[3 * kH * kD + kD] = std::numeric_limits<float>::infinity();  // query 3, head 1
      }
      inputs.push_back(std::move(t));
    }
  }
  return inputs;
}

// Runs the pass; the outputs before and after agree.
bool RunAndCompare(Graph& graph, FusionReport* report = nullptr) {
  auto pass = MakeUnfoldQueryHeadsPass();
  return RunPassKeepingOutputs(*pass, graph, BlockInputs(graph), 1e-6, report);
}

int RankOf(const Value* v) { return v->shape() ? static_cast<int>(v->shape()->size()) : -1; }

const Node* OnlyNode(const Graph& graph, std::string_view op) {
  const Node* found = nullptr;
  for (const Node* n : graph.nodes())
    if (n->op_type() == op) {
      EXPECT_EQ(found, nullptr) << "two " << op;
      found = n;
    }
  return found;
}

TEST(CanonUnfoldQueryHeads, ComputesTheFoldedBlockOnHeads) {
  for (int opset : {11, 17}) {  // Unsqueeze's axes: an attribute before 13, an input from 13
    auto graph = FoldedBlock({}, opset);
    EXPECT_TRUE(RunAndCompare(*graph)) << opset;
    // The softmax reads (B, H, T, S) scores of MatMul(Transpose(Q), K (B, 1, D, S)), P.V reads it.
    const Node* softmax = OnlyNode(*graph, "Softmax");
    ASSERT_NE(softmax, nullptr);
    ASSERT_EQ(RankOf(softmax->output(0)), 4);
    EXPECT_EQ(ShapeOf(softmax->output(0)), "[2, 3, 5, 7]");
    const Node* where = softmax->input(0)->producer();
    ASSERT_EQ(where->op_type(), "Where");
    EXPECT_EQ(ShapeOf(where->input(0)), "[2, 1, 5, 7]");  // the mask in the heads' layout
    const Node* pv = softmax->output(0)->uses()[0].node;
    EXPECT_EQ(pv->op_type(), "MatMul");
    EXPECT_EQ(ShapeOf(pv->input(1)), "[2, 1, 7, 4]");
    for (const Node* n : graph->nodes())
      if (n->op_type() == "MatMul") EXPECT_EQ(RankOf(n->input(0)), 4);
    // A fixed point.
    auto pass = MakeUnfoldQueryHeadsPass();
    EXPECT_FALSE(*RunPass(*pass, *graph));
  }
}

TEST(CanonUnfoldQueryHeads, TakesAKeySharedByTheBatch) {
  auto graph = FoldedBlock({.key_rank2 = true});
  EXPECT_TRUE(RunAndCompare(*graph));
  EXPECT_EQ(RankOf(OnlyNode(*graph, "Softmax")->output(0)), 4);
}

TEST(CanonUnfoldQueryHeads, ViewsABaddbmmBaseInTheHeadsLayout) {
  auto graph = FoldedBlock({.zeros_base = true});
  EXPECT_TRUE(RunAndCompare(*graph));
  const Node* add = OnlyNode(*graph, "Add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(RankOf(add->output(0)), 4);
  EXPECT_EQ(add->input(1)->producer()->op_type(), "Transpose");
}

TEST(CanonUnfoldQueryHeads, PermutesAnOperandThatVariesAlongTheHeads) {
  auto graph = FoldedBlock({.mask_per_head = true});
  EXPECT_TRUE(RunAndCompare(*graph));
  const Node* add = OnlyNode(*graph, "Add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(ShapeOf(add->input(1)), "[1, 3, 1, 7]");
}

TEST(CanonUnfoldQueryHeads, LeavesBlocksItCannotProve) {
  struct Case {
    BlockOptions options;
    std::string reason;  // what the report says; empty: no report
  };
  const std::vector<Case> cases = {
      {{.probs_also_output = true}, "(the probabilities) is read outside the block"},
      {{.softmax_axis = 2}, "is not over the last axis"},
      {{.scores_times_input = true}, "not a scale of the scores"},
  };
  for (const Case& c : cases) {
    auto graph = FoldedBlock(c.options);
    FusionReport report;
    EXPECT_FALSE(RunAndCompare(*graph, &report)) << c.reason;
    for (const Node* n : graph->nodes())
      if (n->op_type() == "MatMul") EXPECT_EQ(RankOf(n->input(0)), 3) << c.reason;
    ASSERT_EQ(report.rejected.size(), 1u) << c.reason;
    EXPECT_EQ(report.rejected[0].pattern, "unfold_query_heads");
    EXPECT_NE(report.rejected[0].reason.find(c.reason), std::string::npos) << report.rejected[0].reason;
  }
}

}  // namespace
}  // namespace attune::testing
