// scale_before_mask: GPT-J's Div(Where(causal, scores, min), √D) becomes
// Where(causal, scores / √D, min / √D) with the same elements (NaN and Inf
// included); a Where that another node reads, a scale that is not constant,
// k / Where, a Where with no constant branch, or a fill that would no longer
// hide its keys after the scale are left alone.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/passes/passes.h"
#include "tests/common/compare.h"
#include "tests/common/graph_builder.h"
#include "tests/common/torch_export_graphs.h"
#include "tests/passes/canon_test_util.h"

namespace attune::testing {
namespace {

constexpr ElementType kF32 = ElementType::kFloat32;
constexpr int64_t kB = 2, kH = 2, kT = 5, kD = 4;

struct ChainOptions {
  std::string scale_op = "Div";
  bool scale_first = false;        // Mul(k, Where(..)) or Div(k, Where(..))
  bool fill_first = false;         // Where(c, min, s): the fill is the first branch
  bool scale_is_input = false;     // the scale is a graph input, not a constant
  bool where_read_twice = false;   // the masked scores are also a graph output
  bool fill_is_input = false;      // no constant branch
  float fill_value = std::numeric_limits<float>::lowest();
};

// q·kᵀ (B, H, T, T), Where(causal, s, min), scaled by 4, plus a padding
// input (B, 1, 1, T), Softmax: GPT-J's attention weights.
std::unique_ptr<Graph> Chain(const ChainOptions& o) {
  GraphBuilder b;
  Value* q = b.Input("q", kF32, Dims({kB, kH, kT, kD}));
  Value* k = b.Input("k", kF32, Dims({kB, kH, kD, kT}));
  Value* pad = b.Input("pad", kF32, Dims({kB, 1, 1, kT}));
  Tensor causal = *Tensor::Create(ElementType::kBool, {kT, kT});
  for (int64_t i = 0; i < kT; ++i)
    for (int64_t j = 0; j < kT; ++j) causal.data<bool>()[i * kT + j] = j <= i;
  Value* c = b.Constant("causal", std::move(causal));
  Value* s = b.Node("MatMul", {q, k});
  Value* fill = o.fill_is_input ? b.Input("fill", kF32, Dims({}))
                                : b.Constant("min", ScalarOf<float>(o.fill_value));
  Value* w = b.Node("Where", o.fill_first ? std::vector<Value*>{b.Node("Not", {c}), fill, s}
                                          : std::vector<Value*>{c, s, fill});
  Value* k_scale = o.scale_is_input ? b.Input("scale", kF32, Dims({})) : b.Constant("sqrt_d", ScalarOf<float>(2.0f));
  Value* scaled = b.Node(o.scale_op, o.scale_first ? std::vector<Value*>{k_scale, w} : std::vector<Value*>{w, k_scale});
  b.Output(b.Node("Softmax", {b.Node("Add", {scaled, pad})}, Attrs({{"axis", int64_t{-1}}})));
  if (o.where_read_twice) b.Output(w);
  return BuildWithShapes(b, *MakeShapeInferencePass());
}

std::vector<Tensor> ChainInputs(const Graph& graph) {
  std::vector<Tensor> inputs;
  uint32_t seed = 3;
  for (const Value* in : graph.inputs()) {
    Tensor t = PseudoRandom(StaticDims(in), seed++);
    if (in->name() == "q") {
      t.data<float>()[1] = std::numeric_limits<float>::quiet_NaN();
      t.data<float>()[2 * kD] = std::numeric_limits<float>::infinity();
    }
    if (in->name() == "pad") t.data<float>()[kT - 1] = std::numeric_limits<float>::lowest();
    if (in->name() == "scale") t.data<float>()[0] = 2.0f;
    inputs.push_back(std::move(t));
  }
  return inputs;
}

// Runs the pass; the outputs before and after are the same elements: the
// same operations on the same values.
bool RunAndCompare(Graph& graph) {
  auto pass = MakeScaleBeforeMaskPass();
  return RunPassKeepingOutputs(*pass, graph, ChainInputs(graph), 0.0);
}

// The node whose output the Add before the Softmax reads first.
const Node* ScoresBeforeAdd(const Graph& graph) {
  for (const Node* n : graph.nodes())
    if (n->op_type() == "Add") return n->input(0)->producer();
  return nullptr;
}

TEST(CanonScaleBeforeMask, MovesTheScaleOntoTheBranches) {
  for (const std::string op : {"Div", "Mul"}) {
    for (bool fill_first : {false, true}) {
      SCOPED_TRACE(op + (fill_first ? " fill first" : ""));
      auto graph = Chain({.scale_op = op, .fill_first = fill_first});
      EXPECT_TRUE(RunAndCompare(*graph));
      const Node* where = ScoresBeforeAdd(*graph);
      ASSERT_NE(where, nullptr);
      EXPECT_EQ(where->op_type(), "Where");
      const Node* scaled_scores = where->input(fill_first ? 2 : 1)->producer();
      ASSERT_NE(scaled_scores, nullptr);
      EXPECT_EQ(scaled_scores->op_type(), op);
      EXPECT_EQ(scaled_scores->input(0)->producer()->op_type(), "MatMul");
    }
  }
  auto scale_first = Chain({.scale_op = "Mul", .scale_first = true});
  EXPECT_TRUE(RunAndCompare(*scale_first));
  EXPECT_EQ(ScoresBeforeAdd(*scale_first)->op_type(), "Where");
}

TEST(CanonScaleBeforeMask, LeavesWhatIsNotAScaledMask) {
  EXPECT_FALSE(RunAndCompare(*Chain({.scale_first = true})));  // k / Where(..) is not a scale of it
  EXPECT_FALSE(RunAndCompare(*Chain({.scale_is_input = true})));
  EXPECT_FALSE(RunAndCompare(*Chain({.where_read_twice = true})));
  EXPECT_FALSE(RunAndCompare(*Chain({.fill_is_input = true})));
  // -1e4 / 2 no longer hides a key as the patterns require; -1e4 * 2 does.
  EXPECT_FALSE(RunAndCompare(*Chain({.fill_value = -1e4f})));
  EXPECT_TRUE(RunAndCompare(*Chain({.scale_op = "Mul", .fill_value = -1e4f})));
}

}  // namespace
}  // namespace attune::testing
