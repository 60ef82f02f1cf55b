// unmerge_heads: a bmm attention on heads merged into the batch is computed on
// the 4-D tensors, with the same elements; every region whose dims, readers or
// ops do not prove it a relabelling is left as it is.
#include <gtest/gtest.h>

#include "engine/passes/passes.h"
#include "engine/passes/symbolic_dim.h"
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
  bool keys_merged_hb = false;     // K merged from (H, B, S, D)
  bool scores_split_hb = false;    // scores viewed back as (H, B, T, S)
  bool probs_also_output = false;  // the 3-D softmax output is a graph output too
  bool merged_q_read_twice = false;  // the merged Q is also read by a Relu graph output
  bool merged_kv_outputs = false;    // the merged K and V are graph outputs too (BLOOM's presents)
  int64_t softmax_axis = -1;       // 0 means: no axis attribute
  bool bias_merged = false;        // scores + a (B*H, 1, S) bias merged from (B, H, 1, S)
  bool bias_unmerged = false;      // scores + a (B*H, 1, S) graph input
  bool bias_rows_merged = false;   // scores + BLOOM's ALiBi: a (B, H, S) input reshaped to (B*H, 1, S)
};

Value* ReshapeTo(GraphBuilder& b, Value* x, std::vector<int64_t> shape) {
  return b.Node("Reshape", {x, b.Constant("shape", Int64s(shape))});
}

// OPT's form: bmm(q, kᵀ) · 0.5, view (B, H, T, S) + mask, view (B*H, T, S),
// softmax, bmm with v, view (B, H, T, D). Inputs q, k, v, mask[, bias].
std::unique_ptr<Graph> BmmBlock(const BlockOptions& o, int opset = 17) {
  GraphBuilder b(opset);
  Value* q = b.Input("q", kF32, Dims({kB, kH, kT, kD}));
  Value* k = b.Input("k", kF32, Dims({kB, kH, kS, kD}));
  Value* v = b.Input("v", kF32, Dims({kB, kH, kS, kD}));
  Value* mask = b.Input("mask", kF32, Dims({kB, 1, kT, kS}));
  Value* q3 = ReshapeTo(b, q, {kB * kH, kT, kD});
  Value* k3 = o.keys_merged_hb
                  ? ReshapeTo(b, b.Node("Transpose", {k}, Attrs({{"perm", std::vector<int64_t>{1, 0, 2, 3}}})),
                              {kB * kH, kS, kD})
                  : ReshapeTo(b, k, {kB * kH, kS, kD});
  Value* v3 = ReshapeTo(b, v, {-1, kS, kD});
  Value* kt = b.Node("Transpose", {k3}, Attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}));
  Value* s = b.Node("Mul", {b.Node("MatMul", {q3, kt}), b.Constant("alpha", ScalarOf<float>(0.5f))});
  if (o.bias_merged) {
    Value* bias = b.Input("bias", kF32, Dims({kB, kH, 1, kS}));
    s = b.Node("Add", {s, ReshapeTo(b, bias, {kB * kH, 1, kS})});
  }
  if (o.bias_unmerged) s = b.Node("Add", {b.Input("bias", kF32, Dims({kB * kH, 1, kS})), s});
  if (o.bias_rows_merged) {
    Value* alibi = b.Input("alibi", kF32, Dims({kB, kH, kS}));
    s = b.Node("Add", {ReshapeTo(b, alibi, {kB * kH, 1, kS}), s});
  }
  Value* s4 = o.scores_split_hb ? ReshapeTo(b, s, {kH, kB, kT, kS}) : ReshapeTo(b, s, {kB, kH, kT, kS});
  // In the swapped view the mask is added along the invented B axis.
  Value* masked = o.scores_split_hb ? b.Node("Add", {s4, b.Node("Reshape", {mask, b.Constant("m", Int64s({1, kB, kT, kS}))})})
                                    : b.Node("Add", {s4, mask});
  Value* s3 = ReshapeTo(b, masked, {kB * kH, kT, kS});
  Attributes softmax_attrs;
  if (o.softmax_axis != 0) softmax_attrs.Set("axis", o.softmax_axis);
  Value* p = b.Node("Softmax", {s3}, std::move(softmax_attrs));
  Value* out = ReshapeTo(b, b.Node("MatMul", {p, v3}), {kB, kH, kT, kD});
  b.Output(out);
  if (o.probs_also_output) b.Output(p);
  if (o.merged_q_read_twice) b.Output(b.Node("Relu", {q3}));
  if (o.merged_kv_outputs) {
    b.Output(k3);
    b.Output(v3);
  }
  return BuildWithShapes(b, *MakeShapeInferencePass());
}

std::vector<Tensor> BlockInputs(const Graph& graph) {
  std::vector<Tensor> inputs;
  uint32_t seed = 1;
  for (const Value* in : graph.inputs()) {
    const std::vector<int64_t> shape = StaticDims(in);
    inputs.push_back(PseudoRandom(shape, seed++));
  }
  return inputs;
}

// Runs the pass; the outputs before and after agree (shapes and values).
bool RunAndCompare(Graph& graph) {
  auto pass = MakeUnmergeHeadsPass();
  return RunPassKeepingOutputs(*pass, graph, BlockInputs(graph), 1e-6);
}

int RankOf(const Value* v) { return v->shape() ? static_cast<int>(v->shape()->size()) : -1; }

// MatMuls of rank-3 operands left in the graph.
int BatchMergedMatMuls(const Graph& graph) {
  int n = 0;
  for (const Node* node : graph.nodes())
    if (node->op_type() == "MatMul" && RankOf(node->input(0)) == 3) ++n;
  return n;
}

TEST(CanonUnmergeHeads, ComputesTheBmmBlockOnFourDimensionalHeads) {
  auto graph = BmmBlock({});
  const std::string output_name = graph->outputs()[0]->name();
  EXPECT_TRUE(RunAndCompare(*graph));
  EXPECT_EQ(BatchMergedMatMuls(*graph), 0);
  EXPECT_EQ(CountOps(*graph, "Reshape"), 0);  // every merge met its view back
  EXPECT_EQ(CountOps(*graph, "MatMul"), 2);
  EXPECT_EQ(CountOps(*graph, "Softmax"), 1);
  EXPECT_EQ(graph->outputs()[0]->name(), output_name);
  // The scores read Q and Transpose(K, 0,1,3,2) themselves, as the attention patterns want.
  const Node* softmax = nullptr;
  for (const Node* n : graph->nodes())
    if (n->op_type() == "Softmax") softmax = n;
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(RankOf(softmax->input(0)), 4);
  const Node* scores = nullptr;
  for (const Node* n : graph->nodes())
    if (n->op_type() == "MatMul" && n->input(0) == graph->inputs()[0]) scores = n;
  ASSERT_NE(scores, nullptr);
  const Node* kt = scores->input(1)->producer();
  ASSERT_EQ(kt->op_type(), "Transpose");
  EXPECT_EQ(kt->input(0), graph->inputs()[1]);
  EXPECT_EQ(*kt->attributes().GetInts("perm"), (std::vector<int64_t>{0, 1, 3, 2}));
  // A fixed point: nothing 3-D is left to unmerge.
  auto pass = MakeUnmergeHeadsPass();
  EXPECT_FALSE(*RunPass(*pass, *graph));
}

TEST(CanonUnmergeHeads, KeepsAMergedBiasAsAnAddOfTheScores) {
  auto graph = BmmBlock({.bias_merged = true});
  EXPECT_TRUE(RunAndCompare(*graph));
  EXPECT_EQ(BatchMergedMatMuls(*graph), 0);
  int four_d_adds = 0;
  for (const Node* n : graph->nodes())
    if (n->op_type() == "Add" && RankOf(n->output(0)) == 4) ++four_d_adds;
  EXPECT_EQ(four_d_adds, 2);  // the bias and the mask
}

TEST(CanonUnmergeHeads, UnsqueezesABiasMergedFromRows) {
  for (int opset : {11, 17}) {  // Unsqueeze's axes: an attribute before 13, an input from 13
    auto graph = BmmBlock({.bias_rows_merged = true}, opset);
    EXPECT_TRUE(RunAndCompare(*graph)) << opset;
    EXPECT_EQ(BatchMergedMatMuls(*graph), 0) << opset;
    EXPECT_EQ(CountOps(*graph, "Unsqueeze"), 1) << opset;
    const Value* alibi = graph->inputs()[4];
    ASSERT_EQ(alibi->uses().size(), 1u);
    const Value* bias4 = alibi->uses()[0].node->output(0);
    ASSERT_EQ(bias4->uses().size(), 1u);
    const Node* add = bias4->uses()[0].node;
    EXPECT_EQ(add->op_type(), "Add");
    EXPECT_EQ(RankOf(add->output(0)), 4);
  }
}

TEST(CanonUnmergeHeads, LeavesKeysMergedFromHeadsThenBatch) {
  auto graph = BmmBlock({.keys_merged_hb = true});
  RunAndCompare(*graph);
  // Q·Kᵀ pairs (b, h) with another (b', h'): the scores stay 3-D; the
  // softmax and P·V, whose merges are (B, H), may still be unmerged.
  EXPECT_EQ(BatchMergedMatMuls(*graph), 1);
}

TEST(CanonUnmergeHeads, ReportsAMergeInTheOtherOrder) {
  auto graph = BmmBlock({.keys_merged_hb = true});
  FusionReport report;
  PassContext context;
  context.report = &report;
  auto pass = MakeUnmergeHeadsPass();
  ASSERT_TRUE(pass->Run(*graph, context).ok());
  ASSERT_EQ(report.rejected.size(), 1u);
  EXPECT_EQ(report.rejected[0].pattern, "unmerge_heads");
  EXPECT_NE(report.rejected[0].reason.find("merges (3, 2) into the batch, viewed back as (2, 3)"), std::string::npos)
      << report.rejected[0].reason;
  // A region refused for another reason is no rejection of its own.
  auto other = BmmBlock({.probs_also_output = true});
  FusionReport none;
  context.report = &none;
  ASSERT_TRUE(pass->Run(*other, context).ok());
  EXPECT_TRUE(none.rejected.empty());
}

TEST(CanonUnmergeHeads, LeavesAViewBackIntoHeadsThenBatch) {
  auto graph = BmmBlock({.scores_split_hb = true});
  RunAndCompare(*graph);
  // The scores are viewed as (H, B) and merged back from it: neither region
  // meets a view back into its own (B, H).
  EXPECT_EQ(BatchMergedMatMuls(*graph), 2);
  int three_d_muls = 0;
  for (const Node* n : graph->nodes())
    if (n->op_type() == "Mul" && RankOf(n->output(0)) == 3) ++three_d_muls;
  EXPECT_EQ(three_d_muls, 1);
}

TEST(CanonUnmergeHeads, LeavesRegionsWithAnotherReader) {
  {
    auto graph = BmmBlock({.probs_also_output = true});
    RunAndCompare(*graph);
    EXPECT_EQ(BatchMergedMatMuls(*graph), 1);  // the softmax output is read outside: P·V stays
    EXPECT_EQ(RankOf(graph->outputs()[1]), 3);
  }
}

// BLOOM returns its merged keys and values as presents: a merged value read
// outside the region is lifted all the same, and its merge stays for the
// other reader, which still sees the 3-D value.
TEST(CanonUnmergeHeads, LiftsAMergedValueThatIsAlsoReadOutside) {
  {
    auto graph = BmmBlock({.merged_q_read_twice = true});
    EXPECT_TRUE(RunAndCompare(*graph));
    EXPECT_EQ(BatchMergedMatMuls(*graph), 0);
    EXPECT_EQ(RankOf(graph->outputs()[1]), 3);  // Relu(merged Q)
    const Node* relu = graph->outputs()[1]->producer();
    ASSERT_NE(relu, nullptr);
    EXPECT_EQ(RankOf(relu->input(0)), 3);
  }
  {
    auto graph = BmmBlock({.merged_kv_outputs = true});
    EXPECT_TRUE(RunAndCompare(*graph));
    EXPECT_EQ(BatchMergedMatMuls(*graph), 0);
    ASSERT_EQ(graph->outputs().size(), 3u);
    EXPECT_EQ(RankOf(graph->outputs()[1]), 3);  // the merged K, still the merge's output
    EXPECT_EQ(RankOf(graph->outputs()[2]), 3);
  }
}

TEST(CanonUnmergeHeads, LeavesASoftmaxNotOverTheLastAxis) {
  auto graph = BmmBlock({.softmax_axis = 1});
  RunAndCompare(*graph);
  EXPECT_EQ(BatchMergedMatMuls(*graph), 1);
  // Before opset 13 a Softmax without an axis is axis 1 (the last two axes flattened).
  auto old = BmmBlock({.softmax_axis = 0}, 11);
  RunAndCompare(*old);
  EXPECT_EQ(BatchMergedMatMuls(*old), 1);
  auto old_last = BmmBlock({.softmax_axis = -1}, 11);
  EXPECT_TRUE(RunAndCompare(*old_last));
  EXPECT_EQ(BatchMergedMatMuls(*old_last), 0);
}

// A (B*H, 1, S) graph input of known B and H (nn.MultiheadAttention's 3-D
// attn_mask) is read through its view as (B, H, 1, S): one bias per head,
// never dropped.
TEST(CanonUnmergeHeads, NeverDropsABiasThatIsNotMerged) {
  auto graph = BmmBlock({.bias_unmerged = true});
  EXPECT_TRUE(RunAndCompare(*graph));
  EXPECT_EQ(BatchMergedMatMuls(*graph), 0);
  const Value* bias = graph->inputs()[4];
  ASSERT_EQ(bias->uses().size(), 1u);
  const Node* view = bias->uses()[0].node;
  ASSERT_EQ(view->op_type(), "Reshape");
  ASSERT_EQ(view->output(0)->uses().size(), 1u);
  EXPECT_EQ(view->output(0)->uses()[0].node->op_type(), "Add");
}

// Symbolic dims: the merge's (B, H) must be the split's, dim by dim.
struct SymbolicCase {
  SymbolicShape merged_from;  // the 4-D input of the merge
  SymbolicShape split_into;   // the 4-D output of the view back
};

bool UnmergesSymbolic(const SymbolicCase& c) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, c.merged_from);
  Value* shape = b.Input("shape3", ElementType::kInt64, Dims({3}));
  Value* shape4 = b.Input("shape4", ElementType::kInt64, Dims({4}));
  Value* merged = b.Node("Reshape", {x, shape});
  Value* p = b.Node("Softmax", {merged}, Attrs({{"axis", int64_t{-1}}}));
  Value* split = b.Node("Reshape", {p, shape4});
  b.Output(split);
  const Dim batch_heads = DimMul(c.merged_from[0], c.merged_from[1]);
  merged->set_shape(SymbolicShape{batch_heads, c.merged_from[2], c.merged_from[3]});
  p->set_shape(merged->shape());
  split->set_shape(c.split_into);
  auto pass = MakeUnmergeHeadsPass();
  auto changed = RunPass(*pass, b.graph());
  EXPECT_TRUE(changed.ok()) << changed.status();
  return changed.ok() && *changed;
}

TEST(CanonUnmergeHeads, ProvesEveryDimSymbolically) {
  EXPECT_TRUE(UnmergesSymbolic({Dims({"batch", 4, "seq", "seq"}), Dims({"batch", 4, "seq", "seq"})}));
  // (H, B) merged, (B, H) split: the same B*H, not the same elements.
  EXPECT_FALSE(UnmergesSymbolic({Dims({4, "batch", "seq", "seq"}), Dims({"batch", 4, "seq", "seq"})}));
  EXPECT_FALSE(UnmergesSymbolic({Dims({"batch", 4, "seq", "seq"}), Dims({"batch", 4, "seq", "total"})}));
  SymbolicShape unknown_last = Dims({"batch", 4, "seq", "seq"});
  unknown_last[3] = Dim();
  EXPECT_FALSE(UnmergesSymbolic({unknown_last, Dims({"batch", 4, "seq", "seq"})}));
  EXPECT_FALSE(UnmergesSymbolic({Dims({"batch", "h", "seq", "seq"}), Dims({"batch", 4, "seq", "seq"})}));
}

// OPT with a KV cache: a padding of its own length L broadcast into the
// 4-D scores of S keys leaves their last dim unknown. The merge back to
// (B*H, T, S) becomes a view of the 4-D value to (B, H, T, S), which makes
// the merge's check: the same outputs for L == S and L == 1, the same
// failure for any other L.
TEST(CanonUnmergeHeads, ViewsAMergeWhoseKeyCountIsNotProven) {
  GraphBuilder b;
  Value* q = b.Input("q", kF32, Dims({kB, kH, kT, kD}));
  Value* k = b.Input("k", kF32, Dims({kB, kH, "kv", kD}));
  Value* v = b.Input("v", kF32, Dims({kB, kH, "kv", kD}));
  Value* mask = b.Input("mask", kF32, Dims({kB, 1, kT, "keys"}));
  // The key count as torch writes it: k.size(2) into the views' targets.
  Value* keys = b.Node("Gather", {b.Node("Shape", {k}), b.Constant("at", Int64s({2}))}, Attrs({{"axis", int64_t{0}}}));
  auto view = [&](Value* x, std::vector<int64_t> leading) {
    Value* target = b.Node("Concat", {b.Constant("leading", Int64s(leading)), keys}, Attrs({{"axis", int64_t{0}}}));
    return b.Node("Reshape", {x, target});
  };
  Value* kt = b.Node("Transpose", {ReshapeTo(b, k, {kB * kH, -1, kD})}, Attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}));
  Value* s = b.Node("MatMul", {ReshapeTo(b, q, {kB * kH, kT, kD}), kt});
  Value* masked = b.Node("Add", {view(s, {kB, kH, kT}), mask});
  Value* p = b.Node("Softmax", {view(masked, {kB * kH, kT})}, Attrs({{"axis", int64_t{-1}}}));
  b.Output(ReshapeTo(b, b.Node("MatMul", {p, ReshapeTo(b, v, {kB * kH, -1, kD})}), {kB, kH, kT, kD}));
  auto graph = b.Build();
  ASSERT_TRUE(RunPass(*MakeShapeInferencePass(), *graph).ok());
  EXPECT_TRUE(masked->shape()->back().is_unknown());
  auto original = graph->Clone();
  auto changed = RunPass(*MakeUnmergeHeadsPass(), *graph);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(BatchMergedMatMuls(*graph), 0);
  for (int64_t keys : {kS, int64_t{1}, int64_t{3}}) {
    const std::vector<Tensor> inputs = {PseudoRandom({kB, kH, kT, kD}, 1), PseudoRandom({kB, kH, kS, kD}, 2),
                                        PseudoRandom({kB, kH, kS, kD}, 3), PseudoRandom({kB, 1, kT, keys}, 4)};
    auto before = RunGraph(*original, DefaultKernelRegistry(), inputs);
    auto after = RunGraph(*graph, DefaultKernelRegistry(), inputs);
    ASSERT_EQ(before.ok(), keys != 3) << before.status();
    ASSERT_EQ(after.ok(), before.ok()) << after.status();
    if (before.ok()) EXPECT_LT(MaxAbsDifference((*before)[0], (*after)[0]), 1e-6) << keys << " keys";
  }
}

// BLOOM with its cache: the merged past keys (B*H, D, P) and values
// (B*H, P, D), graph inputs with a batch dim of their own, are concatenated
// to the merged new ones; the Concats are the presents. The region reads the
// presents viewed as (B, H, ·, ·), and a past of another batch still fails
// in the Concat, empty or not.
TEST(CanonUnmergeHeads, ViewsTheCacheConcatOfMergedKeysAndValues) {
  GraphBuilder b;
  Value* q = b.Input("q", kF32, Dims({kB, kH, kT, kD}));
  Value* k = b.Input("k", kF32, Dims({kB, kH, kT, kD}));
  Value* v = b.Input("v", kF32, Dims({kB, kH, kT, kD}));
  Value* past_k = b.Input("past_k", kF32, Dims({"batch_x_heads", kD, "past"}));
  Value* past_v = b.Input("past_v", kF32, Dims({"batch_x_heads", "past", kD}));
  Value* mask = b.Input("mask", kF32, Dims({kB, 1, kT, 1}));
  Value* kt3 = ReshapeTo(b, b.Node("Transpose", {k}, Attrs({{"perm", std::vector<int64_t>{0, 1, 3, 2}}})), {kB * kH, kD, kT});
  Value* present_k = b.Node("Concat", {past_k, kt3}, Attrs({{"axis", int64_t{2}}}));
  Value* present_v = b.Node("Concat", {past_v, ReshapeTo(b, v, {kB * kH, kT, kD})}, Attrs({{"axis", int64_t{1}}}));
  Value* s = b.Node("Mul", {b.Node("MatMul", {ReshapeTo(b, q, {kB * kH, kT, kD}), present_k}),
                            b.Constant("alpha", ScalarOf<float>(0.5f))});
  Value* masked = b.Node("Add", {ReshapeTo(b, s, {kB, kH, kT, -1}), mask});
  Value* p = b.Node("Softmax", {ReshapeTo(b, masked, {kB * kH, kT, -1})}, Attrs({{"axis", int64_t{-1}}}));
  b.Output(ReshapeTo(b, b.Node("MatMul", {p, present_v}), {kB, kH, kT, kD}));
  b.Output(present_k);
  b.Output(present_v);
  auto graph = b.Build();
  ASSERT_TRUE(RunPass(*MakeShapeInferencePass(), *graph).ok());
  // The presents' batch dim is the merge's B*H, not the past's own symbol.
  EXPECT_EQ((*present_k->shape())[0], Dim::Known(kB * kH));
  auto original = graph->Clone();
  auto changed = RunPass(*MakeUnmergeHeadsPass(), *graph);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(BatchMergedMatMuls(*graph), 0);
  EXPECT_EQ(CountOps(*graph, "Concat") - CountOps(*original, "Concat"), 2);  // the views' targets
  for (int64_t past : {int64_t{0}, int64_t{3}}) {
    for (int64_t batch_heads : {kB * kH, kB * kH + 1, int64_t{1}}) {
      const std::vector<Tensor> inputs = {
          PseudoRandom({kB, kH, kT, kD}, 1),         PseudoRandom({kB, kH, kT, kD}, 2),
          PseudoRandom({kB, kH, kT, kD}, 3),         PseudoRandom({batch_heads, kD, past}, 4),
          PseudoRandom({batch_heads, past, kD}, 5), PseudoRandom({kB, 1, kT, 1}, 6)};
      auto before = RunGraph(*original, DefaultKernelRegistry(), inputs);
      auto after = RunGraph(*graph, DefaultKernelRegistry(), inputs);
      ASSERT_EQ(before.ok(), batch_heads == kB * kH) << before.status();
      ASSERT_EQ(after.ok(), before.ok()) << "past " << past << ", batch*heads " << batch_heads;
      if (!before.ok()) continue;
      for (size_t i = 0; i < before->size(); ++i) {
        EXPECT_EQ((*before)[i].shape(), (*after)[i].shape());
        EXPECT_LT(MaxAbsDifference((*before)[i], (*after)[i]), 1e-6) << "output " << i << ", past " << past;
      }
    }
  }
  // A fixed point: the views of the presents are not split again.
  EXPECT_FALSE(*RunPass(*MakeUnmergeHeadsPass(), *graph));
}

}  // namespace
}  // namespace attune::testing
