// Shape folding: symbolic Reshape/Expand targets become constants; fully known
// shape computations become constants; results are unchanged when run.
#include <gtest/gtest.h>

#include "engine/passes/passes.h"
#include "tests/common/graph_builder.h"
#include "tests/passes/canon_test_util.h"

namespace attune::testing {
namespace {

constexpr ElementType kF32 = ElementType::kFloat32;

std::vector<int64_t> ConstantInts(const Value* v) {
  EXPECT_NE(v->constant(), nullptr) << v->name() << " is not constant";
  if (v->constant() == nullptr) return {};
  const auto values = v->constant()->values<int64_t>();
  return std::vector<int64_t>(values.begin(), values.end());
}

// Concat(Unsqueeze(Gather(Shape(src), i)) for i in dims_from_src, then constants).
Value* ShapeChain(GraphBuilder& b, Value* src, std::vector<int64_t> dims_from_src, std::vector<int64_t> rest) {
  std::vector<Value*> parts;
  for (int64_t i : dims_from_src) {
    Value* dim = b.Node("Gather", {b.Node("Shape", {src}), b.Constant("i", ScalarOf<int64_t>(i))},
                        Attrs({{"axis", int64_t{0}}}));
    parts.push_back(b.Node("Unsqueeze", {dim, b.Constant("axes", Int64s({0}))}));
  }
  for (int64_t r : rest) parts.push_back(b.Constant("c", Int64s({r})));
  return b.Node("Concat", parts, Attrs({{"axis", int64_t{0}}}));
}

// Runs shape folding and checks a second run has nothing left to do.
void FoldShapes(Graph& graph) {
  auto pass = MakeShapeFoldingPass();
  auto first = RunPass(*pass, graph);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(*first);
  auto second = RunPass(*pass, graph);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(*second) << "shape folding is not idempotent";
}

TEST(CanonShapeFolding, SplitHeadsReshapeGetsAConstantTarget) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 768}));
  Value* split = b.Node("Reshape", {x, ShapeChain(b, x, {0, 1}, {12, 64})});
  b.Output(split);
  FoldShapes(b.graph());
  EXPECT_EQ(ConstantInts(split->producer()->input(1)), std::vector<int64_t>({0, 0, 12, 64}));
  b.graph().RemoveDeadNodes();
  EXPECT_EQ(b.graph().num_nodes(), 1);  // only the Reshape is left
}

TEST(CanonShapeFolding, MergeHeadsReshapeUsesZerosAndMinusOne) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 768}));
  Value* y = b.Input("y", kF32, Dims({"batch", "seq", 12, 64}));
  // Shape taken of the original input (as torch does): [batch, seq, 768].
  Value* merged = b.Node("Reshape", {y, ShapeChain(b, x, {0, 1}, {768})});
  // Flattening batch*seq: the product is only expressible as -1.
  Value* bs = b.Node("Mul", {b.Node("Gather", {b.Node("Shape", {x}), b.Constant("i0", ScalarOf<int64_t>(0))}),
                             b.Node("Gather", {b.Node("Shape", {x}), b.Constant("i1", ScalarOf<int64_t>(1))})});
  Value* rows_target = b.Node("Concat", {b.Node("Unsqueeze", {bs, b.Constant("ax", Int64s({0}))}),
                                         b.Constant("c", Int64s({768}))},
                              Attrs({{"axis", int64_t{0}}}));
  Value* rows = b.Node("Reshape", {x, rows_target});
  b.Output(merged);
  b.Output(rows);
  FoldShapes(b.graph());
  EXPECT_EQ(ConstantInts(merged->producer()->input(1)), std::vector<int64_t>({0, 0, 768}));
  EXPECT_EQ(ConstantInts(rows->producer()->input(1)), std::vector<int64_t>({-1, 768}));
}

TEST(CanonShapeFolding, StaticDimsFoldToConstantsAndUnprovableTargetsStay) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 768}));
  Value* other = b.Input("o", kF32, Dims({"n", "m"}));
  // Static dim 2 of x: Gather(Shape(x), 2) is known to be 768.
  Value* d2 = b.Node("Gather", {b.Node("Shape", {x}), b.Constant("i", ScalarOf<int64_t>(2))},
                     Attrs({{"axis", int64_t{0}}}));
  b.Output(b.Node("Add", {d2, b.Constant("one", ScalarOf<int64_t>(1))}));
  // Reshape(x, [n, m, -1]): n and m are not x's dims and there is one -1
  // already: not expressible with 0 / -1 alone.
  Value* odd = b.Node("Reshape", {x, ShapeChain(b, other, {0, 1}, {-1})});
  b.Output(odd);
  FoldShapes(b.graph());
  ASSERT_TRUE(d2->is_constant());
  EXPECT_EQ(*d2->constant()->data<int64_t>(), 768);
  EXPECT_FALSE(odd->producer()->input(1)->is_constant());
}

TEST(CanonShapeFolding, AMinusOneBesideACopyIsNotWritten) {
  // Target [batch, seq, heads, 64] for x [batch, seq, 768]. [0, 0, -1, 64]
  // would compute heads whenever batch * seq > 0, but with batch = 0 the
  // original Reshape gives [0, seq, heads, 64] and the constant one cannot
  // infer -1 from an empty tensor: the target stays computed.
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 768}));
  Value* h = b.Input("h", kF32, Dims({"heads"}));
  Value* heads = b.Node("Shape", {h});
  Value* target = b.Node("Concat", {b.Node("Slice", {b.Node("Shape", {x}), b.Constant("s", Int64s({0})),
                                                     b.Constant("e", Int64s({2}))}),
                                    heads, b.Constant("d", Int64s({64}))},
                         Attrs({{"axis", int64_t{0}}}));
  Value* r = b.Node("Reshape", {x, target});
  b.Output(r);
  auto changed = RunPass(*MakeShapeFoldingPass(), b.graph());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(r->producer()->input(1)->is_constant());
}

TEST(CanonShapeFolding, AnUnrelatedSymbolBesideKnownEntriesBecomesMinusOne) {
  // Target [heads, 64] for x [768]: the other entry is positive, so -1 is
  // always inferable and computes heads whenever the original succeeds.
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({768}));
  Value* h = b.Input("h", kF32, Dims({"heads"}));
  Value* target = b.Node("Concat", {b.Node("Shape", {h}), b.Constant("d", Int64s({64}))},
                         Attrs({{"axis", int64_t{0}}}));
  Value* r = b.Node("Reshape", {x, target});
  b.Output(r);
  FoldShapes(b.graph());
  EXPECT_EQ(ConstantInts(r->producer()->input(1)), std::vector<int64_t>({-1, 64}));
}

TEST(CanonShapeFolding, TwoUnrelatedEntriesStay) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 768}));
  Value* h = b.Input("h", kF32, Dims({"heads", "dim"}));
  Value* target = b.Node("Concat", {b.Node("Slice", {b.Node("Shape", {x}), b.Constant("s", Int64s({0})),
                                                     b.Constant("e", Int64s({2}))}),
                                    b.Node("Shape", {h})},
                         Attrs({{"axis", int64_t{0}}}));
  Value* r = b.Node("Reshape", {x, target});
  b.Output(r);
  auto pass = MakeShapeFoldingPass();
  ASSERT_TRUE(RunPass(*pass, b.graph()).ok());
  EXPECT_FALSE(r->producer()->input(1)->is_constant());
}

TEST(CanonShapeFolding, ExpandTargetKeepsSymbolicDimsAsOnes) {
  // GQA repeat: Expand(k[batch, 2, 1, seq, 16], [batch, 2, 3, seq, 16]) -> [1, 1, 3, 1, 1].
  GraphBuilder b;
  Value* k = b.Input("k", kF32, Dims({"batch", 2, 1, "seq", 16}));
  Value* target = ShapeChain(b, k, {0}, {2, 3});
  Value* seq = b.Node("Gather", {b.Node("Shape", {k}), b.Constant("i", ScalarOf<int64_t>(3))});
  target = b.Node("Concat", {target, b.Node("Unsqueeze", {seq, b.Constant("ax", Int64s({0}))}),
                             b.Constant("d", Int64s({16}))},
                  Attrs({{"axis", int64_t{0}}}));
  Value* repeated = b.Node("Expand", {k, target});
  b.Output(repeated);
  FoldShapes(b.graph());
  EXPECT_EQ(ConstantInts(repeated->producer()->input(1)), std::vector<int64_t>({1, 2, 3, 1, 16}));
}

TEST(CanonShapeFolding, TorchExpandWithWhereEqualMinusOne) {
  // x.expand(-1, -1, 8): torch writes Where(Equal(shape, -1), ones, shape).
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 1}));
  Value* shape = ShapeChain(b, x, {0, 1}, {8});
  Value* minus_ones = b.Constant("neg", Int64s({-1, -1, -1}));
  Value* is_keep = b.Node("Equal", {shape, minus_ones});
  Value* ones = b.Constant("ones", Int64s({1, 1, 1}));
  Value* target = b.Node("Where", {is_keep, ones, shape});
  Value* out = b.Node("Expand", {x, target});
  b.Output(out);
  FoldShapes(b.graph());
  EXPECT_EQ(ConstantInts(out->producer()->input(1)), std::vector<int64_t>({1, 1, 8}));
}

TEST(CanonShapeFolding, AllowZeroReshapeIsLeftAlone) {
  GraphBuilder b(14);
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 768}));
  Value* r = b.Node("Reshape", {x, ShapeChain(b, x, {0, 1}, {12, 64})}, Attrs({{"allowzero", int64_t{1}}}));
  b.Output(r);
  auto pass = MakeShapeFoldingPass();
  ASSERT_TRUE(RunPass(*pass, b.graph()).ok());
  EXPECT_FALSE(r->producer()->input(1)->is_constant());
}

TEST(CanonShapeFolding, FoldedGraphComputesTheSameResult) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 12}));
  Value* split = b.Node("Reshape", {x, ShapeChain(b, x, {0, 1}, {3, 4})});
  Value* t = b.Node("Transpose", {split}, Attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
  Value* back = b.Node("Transpose", {t}, Attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
  Value* merged = b.Node("Reshape", {back, ShapeChain(b, x, {0, 1}, {12})});
  b.Output(b.Node("Mul", {merged, b.Constant("two", ScalarOf<float>(2.f))}));
  auto before = b.graph().Clone();
  FoldShapes(b.graph());
  b.graph().RemoveDeadNodes();
  EXPECT_EQ(CountOps(b.graph(), "Shape"), 0);
  std::vector<float> in(2 * 5 * 12);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  Tensor input = Floats({2, 5, 12}, in);
  auto folded = RunGraph(b.graph(), DefaultKernelRegistry(), {input});
  ASSERT_TRUE(folded.ok()) << folded.status();
  auto original = RunGraph(*before, DefaultKernelRegistry(), {input});
  ASSERT_TRUE(original.ok()) << original.status();
  ASSERT_EQ((*folded)[0].shape(), std::vector<int64_t>({2, 5, 12}));
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ((*folded)[0].values<float>()[i], 2.f * in[i]);  // the reshapes cancel out
    EXPECT_EQ((*original)[0].values<float>()[i], 2.f * in[i]);
  }
}

}  // namespace
}  // namespace attune::testing
