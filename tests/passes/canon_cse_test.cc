// CSE merges duplicated nodes and small equal constants, and nothing else.
#include <gtest/gtest.h>

#include "engine/passes/passes.h"
#include "tests/common/graph_builder.h"
#include "tests/passes/canon_test_util.h"

namespace attune::testing {
namespace {

constexpr ElementType kF32 = ElementType::kFloat32;

TEST(CanonCse, DuplicatedShapeChainsMerge) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 64}));
  // Two chains as torch writes them: own Shape, own index constant, own axes constant.
  std::vector<Value*> ends;
  for (int i = 0; i < 2; ++i) {
    Value* dim = b.Node("Gather", {b.Node("Shape", {x}), b.Constant("idx", ScalarOf<int64_t>(1))},
                        Attrs({{"axis", int64_t{0}}}));
    ends.push_back(b.Node("Unsqueeze", {dim, b.Constant("axes", Int64s({0}))}));
  }
  Value* cat = b.Node("Concat", {ends[0], ends[1]}, Attrs({{"axis", int64_t{0}}}));
  b.Output(cat);
  auto pass = MakeCommonSubexpressionPass();
  auto changed = RunPass(*pass, b.graph());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOps(b.graph(), "Shape"), 1);
  EXPECT_EQ(CountOps(b.graph(), "Gather"), 1);
  EXPECT_EQ(CountOps(b.graph(), "Unsqueeze"), 1);
  EXPECT_EQ(cat->producer()->input(0), cat->producer()->input(1));
  EXPECT_FALSE(*RunPass(*pass, b.graph()));  // idempotent
}

TEST(CanonCse, DifferentAttributesOrInputsDoNotMerge) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({2, 3}));
  Value* y = b.Input("y", kF32, Dims({2, 3}));
  Value* s0 = b.Node("Softmax", {x}, Attrs({{"axis", int64_t{0}}}));
  Value* s1 = b.Node("Softmax", {x}, Attrs({{"axis", int64_t{1}}}));
  Value* s2 = b.Node("Softmax", {y}, Attrs({{"axis", int64_t{1}}}));
  Value* c0 = b.Node("Mul", {x, b.Constant("a", Floats({1}, {1.5f}))});
  Value* c1 = b.Node("Mul", {x, b.Constant("b", Floats({1}, {2.5f}))});
  for (Value* v : {s0, s1, s2, c0, c1}) b.Output(v);
  auto pass = MakeCommonSubexpressionPass();
  EXPECT_FALSE(*RunPass(*pass, b.graph()));
  EXPECT_EQ(b.graph().num_nodes(), 5);
}

TEST(CanonCse, TensorAttributesCompareByContent) {
  GraphBuilder b;
  auto constant_node = [&](float v) {
    Attributes a;
    a.Set("value", Floats({2}, {v, v}));
    return b.Node("Constant", {}, a);
  };
  Value* a = constant_node(1.f);
  Value* same = constant_node(1.f);
  Value* other = constant_node(2.f);
  b.Output(b.Node("Add", {a, same}));
  b.Output(b.Node("Add", {a, other}));
  auto pass = MakeCommonSubexpressionPass();
  EXPECT_TRUE(*RunPass(*pass, b.graph()));
  EXPECT_EQ(CountOps(b.graph(), "Constant"), 2);
}

TEST(CanonCse, GraphOutputsKeepTheirNames) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({2}));
  Value* r0 = b.Node("Relu", {x}, {}, "first");
  Value* r1 = b.Node("Relu", {x}, {}, "second");
  b.Output(r0);
  b.Output(r1);
  auto pass = MakeCommonSubexpressionPass();
  EXPECT_FALSE(*RunPass(*pass, b.graph()));
  EXPECT_EQ(b.graph().outputs()[0]->name(), "first_out");
  EXPECT_EQ(b.graph().outputs()[1]->name(), "second_out");
}

TEST(CanonCse, ADuplicateThatIsAGraphOutputAbsorbsTheOtherOne) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({2}));
  Value* inner = b.Node("Neg", {x}, {}, "inner");
  Value* outer = b.Node("Neg", {x}, {}, "outer");
  Value* e = b.Node("Exp", {inner}, {}, "exp");
  b.Output(e);
  b.Output(outer);
  auto pass = MakeCommonSubexpressionPass();
  ASSERT_TRUE(*RunPass(*pass, b.graph()));
  EXPECT_EQ(CountOps(b.graph(), "Neg"), 1);
  EXPECT_EQ(b.graph().outputs()[1], outer);
  EXPECT_EQ(e->producer()->input(0), outer);
}

TEST(CanonCse, RandomOpsNeverMerge) {
  GraphBuilder b;
  Value* r0 = b.Node("RandomNormal", {}, Attrs({{"shape", std::vector<int64_t>{2}}}));
  Value* r1 = b.Node("RandomNormal", {}, Attrs({{"shape", std::vector<int64_t>{2}}}));
  b.Output(b.Node("Add", {r0, r1}));
  auto pass = MakeCommonSubexpressionPass();
  EXPECT_FALSE(*RunPass(*pass, b.graph()));
  EXPECT_EQ(CountOps(b.graph(), "RandomNormal"), 2);
}

TEST(CanonCse, LargeConstantsAreNotCompared) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"n", 256}));
  Value* w0 = b.Constant("w0", Floats({256, 256}, std::vector<float>(256 * 256, 1.f)));
  Value* w1 = b.Constant("w1", Floats({256, 256}, std::vector<float>(256 * 256, 1.f)));
  b.Output(b.Node("MatMul", {x, w0}));
  b.Output(b.Node("MatMul", {x, w1}));
  auto pass = MakeCommonSubexpressionPass();
  EXPECT_FALSE(*RunPass(*pass, b.graph()));
  EXPECT_EQ(CountOps(b.graph(), "MatMul"), 2);
}


TEST(CanonCse, EqualShapeValuesFromDifferentTensorsMerge) {
  // seq read from the ids and from the hidden state: one value afterwards.
  GraphBuilder b;
  Value* ids = b.Input("ids", ElementType::kInt64, Dims({"batch", "seq"}));
  Value* hidden = b.Input("h", ElementType::kFloat32, Dims({"batch", "seq", 64}));
  Value* seq_a = b.Node("Gather", {b.Node("Shape", {ids}), b.Constant("one", ScalarOf<int64_t>(1))}, {}, "a");
  Value* seq_b = b.Node("Gather", {b.Node("Shape", {hidden}), b.Constant("one2", ScalarOf<int64_t>(1))}, {}, "b");
  Value* batch = b.Node("Gather", {b.Node("Shape", {hidden}), b.Constant("zero", ScalarOf<int64_t>(0))}, {}, "c");
  Value* use_a = b.Node("Unsqueeze", {seq_a, b.Constant("ax", Int64s({0}))});
  Value* use_b = b.Node("Unsqueeze", {seq_b, b.Constant("ax2", Int64s({0}))});
  Value* use_c = b.Node("Unsqueeze", {batch, b.Constant("ax3", Int64s({0}))});
  b.Output(b.Node("Concat", {use_a, use_b, use_c}, Attrs({{"axis", int64_t{0}}})));
  auto pass = MakeCommonSubexpressionPass();
  ASSERT_TRUE(*RunPass(*pass, b.graph()));
  ASSERT_TRUE(*RunPass(*pass, b.graph()));  // the Unsqueezes now have one input: they merge
  EXPECT_FALSE(*RunPass(*pass, b.graph()));
  b.graph().RemoveDeadNodes();
  EXPECT_EQ(CountOps(b.graph(), "Unsqueeze"), 2);  // seq and batch stay apart
  EXPECT_EQ(CountOps(b.graph(), "Gather"), 2);
}

}  // namespace
}  // namespace attune::testing
