// Einsum -> Transpose + MatMul: each batched-product layout is rewritten and
// computes what the Einsum did; anything else is left as an Einsum.
#include <gtest/gtest.h>

#include "engine/passes/passes.h"
#include "ops/registry.h"
#include "tests/common/compare.h"
#include "tests/common/graph_builder.h"
#include "tests/common/torch_export_graphs.h"
#include "tests/passes/canon_test_util.h"

namespace attune::testing {
namespace {

constexpr ElementType kF32 = ElementType::kFloat32;

struct EinsumCase {
  std::string equation;
  std::vector<int64_t> a, b;
};

std::unique_ptr<Graph> EinsumGraph(const EinsumCase& c) {
  GraphBuilder b;
  SymbolicShape sa, sb;
  for (int64_t d : c.a) sa.push_back(Dim::Known(d));
  for (int64_t d : c.b) sb.push_back(Dim::Known(d));
  Value* x = b.Input("a", kF32, sa);
  Value* y = b.Input("b", kF32, sb);
  b.Output(b.Node("Einsum", {x, y}, Attrs({{"equation", c.equation}})));
  return b.Build();
}

// Runs the graph before and after the pass on the same inputs.
double RewriteError(const EinsumCase& c, Graph& graph) {
  auto original = graph.Clone();
  auto pass = MakeEinsumToMatMulPass();
  EXPECT_TRUE(*RunPass(*pass, graph)) << c.equation;
  std::vector<Tensor> inputs = {PseudoRandom(c.a, 1), PseudoRandom(c.b, 2)};
  auto before = RunGraph(*original, DefaultKernelRegistry(), inputs);
  auto after = RunGraph(graph, DefaultKernelRegistry(), inputs);
  EXPECT_TRUE(before.ok()) << before.status();
  EXPECT_TRUE(after.ok()) << after.status();
  if (!before.ok() || !after.ok()) return 1e9;
  EXPECT_EQ((*before)[0].shape(), (*after)[0].shape()) << c.equation;
  return MaxAbsDifference((*before)[0], (*after)[0]);
}

TEST(CanonEinsumToMatMul, RewritesAttentionLayouts) {
  const std::vector<EinsumCase> cases = {
      {"bhqd,bhkd->bhqk", {2, 3, 5, 4}, {2, 3, 7, 4}},  // Q·Kᵀ, heads transposed
      {"bhqk,bhkd->bhqd", {2, 3, 5, 7}, {2, 3, 7, 4}},  // P·V: a plain MatMul
      {"bqhd,bkhd->bhqk", {2, 5, 3, 4}, {2, 7, 3, 4}},  // heads not transposed
      {"bhqk,bkhd->bqhd", {2, 3, 5, 7}, {2, 7, 3, 4}},  // output transposed back
      {"ij,jk->ki", {3, 4}, {4, 5}},                     // no batch, output transposed
      {"bik,bjk->bji", {1, 3, 4}, {2, 5, 4}},            // batch broadcast 1 -> 2
      {"bqd,bkd->qbk", {2, 5, 4}, {2, 7, 4}},            // the batch letter placed after a row
  };
  for (const EinsumCase& c : cases) {
    auto graph = EinsumGraph(c);
    EXPECT_LT(RewriteError(c, *graph), 1e-5) << c.equation;
    EXPECT_EQ(CountOps(*graph, "Einsum"), 0) << c.equation;
    EXPECT_EQ(CountOps(*graph, "MatMul"), 1) << c.equation;
  }
}

TEST(CanonEinsumToMatMul, WritesTheFormsTheFusionReads) {
  // Q·Kᵀ with heads first: K transposed on its last two axes only.
  auto graph = EinsumGraph({"bhqd,bhkd->bhqk", {2, 3, 5, 4}, {2, 3, 7, 4}});
  auto pass = MakeEinsumToMatMulPass();
  ASSERT_TRUE(*RunPass(*pass, *graph));
  const Node* matmul = graph->outputs()[0]->producer();
  ASSERT_EQ(matmul->op_type(), "MatMul");
  EXPECT_EQ(matmul->input(0), graph->inputs()[0]);
  const Node* transpose = matmul->input(1)->producer();
  ASSERT_NE(transpose, nullptr);
  EXPECT_EQ(*transpose->attributes().GetInts("perm"), (std::vector<int64_t>{0, 1, 3, 2}));
  EXPECT_FALSE(*RunPass(*pass, *graph));
}

TEST(CanonEinsumToMatMul, LeavesOtherEquationsAlone) {
  const std::vector<EinsumCase> refused = {
      {"bii,bij->bj", {2, 3, 3}, {2, 3, 4}},        // a letter twice in one term (a diagonal)
      {"...qd,...kd->...qk", {2, 5, 4}, {2, 7, 4}},  // ellipsis
      {"bqd,bkd", {2, 5, 4}, {2, 7, 4}},             // implicit output sums b too
      {"bqd,bkd->bk", {2, 5, 4}, {2, 7, 4}},         // q summed over one operand only
      {"bqde,bkde->bqk", {2, 5, 4, 3}, {2, 7, 4, 3}},  // two contracted letters
      {"bqd,kd->bqk", {2, 5, 4}, {7, 4}},            // b missing from one operand
      {"bhqd,hbkd->bhqk", {2, 3, 5, 4}, {3, 2, 7, 4}},  // batch letters in another order
      {"bhqd,bhkd->hbqk", {2, 3, 5, 4}, {2, 3, 7, 4}},  // batch letters reordered in the output
      {"bqd,bkd->bqk", {2, 5, 1}, {2, 7, 4}},        // contracted dims 1 and 4 (Einsum broadcasts)
      {"bq,bk->bqk", {2, 5}, {2, 7}},                // outer product: nothing contracted
  };
  for (const EinsumCase& c : refused) {
    auto graph = EinsumGraph(c);
    auto pass = MakeEinsumToMatMulPass();
    auto changed = RunPass(*pass, *graph);
    ASSERT_TRUE(changed.ok()) << c.equation << ": " << changed.status();
    EXPECT_FALSE(*changed) << c.equation;
    EXPECT_EQ(CountOps(*graph, "Einsum"), 1) << c.equation;
  }
}

TEST(CanonEinsumToMatMul, NeedsKnownRanksAndEqualContractedDims) {
  GraphBuilder b;
  Value* q = b.Input("q", kF32, Dims({"batch", 4, "seq", 16}));
  Value* k = b.Input("k", kF32, Dims({"batch", 4, "seq", "d"}));  // d is not provably 16
  b.Output(b.Node("Einsum", {q, k}, Attrs({{"equation", std::string("bhqd,bhkd->bhqk")}})));
  auto pass = MakeEinsumToMatMulPass();
  EXPECT_FALSE(*RunPass(*pass, b.graph()));

  GraphBuilder unranked;
  Value* x = unranked.Input("x", kF32, Dims({"batch", 4, "seq", 16}));
  Value* y = unranked.Node("Relu", {unranked.Input("y", kF32, Dims({"batch", 4, "seq", 16}))});
  y->set_shape(std::nullopt);
  unranked.Output(unranked.Node("Einsum", {x, y}, Attrs({{"equation", std::string("bhqd,bhkd->bhqk")}})));
  EXPECT_FALSE(*RunPass(*pass, unranked.graph()));
}

}  // namespace
}  // namespace attune::testing
