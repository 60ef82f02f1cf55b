// Algebraic simplification: each neutral-operand rule fires where its shape
// and type proof holds, and nothing is folded that could change a value
// (x·0 with x not constant), a shape (a broadcast that grows x) or a type.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "engine/passes/passes.h"
#include "tests/common/graph_builder.h"
#include "tests/passes/canon_test_util.h"

namespace attune::testing {
namespace {

constexpr ElementType kF32 = ElementType::kFloat32;

// y = op(x, c) (or op(c, x) when `constant_first`), then Relu so y is not a graph output.
struct Binary {
  GraphBuilder b;
  Value* x;
  Value* relu;
  Binary(const std::string& op, Tensor c, bool constant_first = false,
         SymbolicShape x_shape = Dims({"batch", "seq", 4})) {
    x = b.Input("x", kF32, x_shape);
    Value* k = b.Constant("c", std::move(c));
    Value* y = b.Node(op, constant_first ? std::vector<Value*>{k, x} : std::vector<Value*>{x, k});
    relu = b.Node("Relu", {y});
    b.Output(relu);
  }
  bool Simplified() {
    auto pass = MakeAlgebraicSimplifyPass();
    auto changed = RunPass(*pass, b.graph());
    EXPECT_TRUE(changed.ok()) << changed.status();
    return changed.ok() && *changed;
  }
  bool ReluReadsX() const { return relu->producer()->input(0) == x; }
};

TEST(CanonAlgebraicSimplify, RemovesNeutralOperands) {
  {
    Binary g("Mul", ScalarOf<float>(1.0f));
    EXPECT_TRUE(g.Simplified());
    EXPECT_TRUE(g.ReluReadsX());
    EXPECT_EQ(g.b.graph().num_nodes(), 1);
  }
  {
    Binary g("Mul", Floats({4}, {1, 1, 1, 1}), /*constant_first=*/true);
    EXPECT_TRUE(g.Simplified());
    EXPECT_TRUE(g.ReluReadsX());
  }
  {
    Binary g("Div", Floats({1, 1, 4}, {1, 1, 1, 1}));
    EXPECT_TRUE(g.Simplified());
    EXPECT_TRUE(g.ReluReadsX());
  }
  {
    Binary g("Add", Floats({1, 4}, {0, 0, 0, 0}), /*constant_first=*/true);
    EXPECT_TRUE(g.Simplified());
    EXPECT_TRUE(g.ReluReadsX());
  }
  {
    Binary g("Sub", ScalarOf<float>(0.0f));
    EXPECT_TRUE(g.Simplified());
    EXPECT_TRUE(g.ReluReadsX());
  }
}

TEST(CanonAlgebraicSimplify, KeepsWhatIsNotNeutral) {
  EXPECT_FALSE(Binary("Mul", ScalarOf<float>(0.0f)).Simplified());         // x·0 is NaN for x = Inf
  EXPECT_FALSE(Binary("Mul", Floats({2}, {1, 2}), false, Dims({3, 2})).Simplified());
  EXPECT_FALSE(Binary("Div", ScalarOf<float>(1.0f), /*constant_first=*/true).Simplified());  // 1/x
  EXPECT_FALSE(Binary("Sub", ScalarOf<float>(0.0f), /*constant_first=*/true).Simplified());  // 0−x
  EXPECT_FALSE(Binary("Add", ScalarOf<float>(1.0f)).Simplified());
  EXPECT_FALSE(Binary("Mul", ScalarOf<float>(std::nanf(""))).Simplified());
  // A broadcast that grows x: (seq, 4) + (2, seq, 4) zeros has a new leading axis.
  auto zeros = *Tensor::Create(kF32, {2, 1, 4});
  EXPECT_FALSE(Binary("Add", zeros, false, Dims({"seq", 4})).Simplified());
  // (batch, 1) * ones(1, 4) is (batch, 4).
  EXPECT_FALSE(Binary("Mul", Floats({1, 4}, {1, 1, 1, 1}), false, Dims({"batch", 1})).Simplified());
  // Another type: Mul(float x, double 1) is not a valid graph to bless.
  EXPECT_FALSE(Binary("Mul", ScalarOf<double>(1.0)).Simplified());
  // Unknown rank: no shape proof.
  Binary unranked("Mul", ScalarOf<float>(1.0f));
  unranked.x->set_shape(std::nullopt);
  EXPECT_FALSE(unranked.Simplified());
}

TEST(CanonAlgebraicSimplify, KeepsAGraphOutputsProducer) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({4}));
  Value* y = b.Node("Mul", {x, b.Constant("one", ScalarOf<float>(1.0f))}, {}, "y");
  b.Output(y);
  auto pass = MakeAlgebraicSimplifyPass();
  EXPECT_FALSE(*RunPass(*pass, b.graph()));
  EXPECT_EQ(b.graph().num_nodes(), 1);
}

// baddbmm as torch 1.13 writes it: Add(Mul(MatMul, alpha), Mul(ConstantOfShape(0), beta)).
struct Baddbmm {
  GraphBuilder b;
  Value* scaled;
  Value* added;
  Value* relu;
  explicit Baddbmm(float beta, Attributes fill = {}) {
    Value* q = b.Input("q", kF32, Dims({"bh", "seq", 16}));
    Value* kt = b.Input("kt", kF32, Dims({"bh", 16, "seq"}));
    Value* shape = b.Input("shape", ElementType::kInt64, Dims({3}));
    Value* base = b.Node("ConstantOfShape", {shape}, std::move(fill));
    base->set_shape(Dims({"bh", "seq", "seq"}));  // what shape folding proves in a model
    scaled = b.Node("Mul", {b.Node("MatMul", {q, kt}), b.Constant("alpha", ScalarOf<float>(0.25f))});
    added = b.Node("Mul", {base, b.Constant("beta", ScalarOf<float>(beta))});
    // The types and shapes shape inference gives them in a model.
    for (Value* v : {scaled, added}) {
      v->set_type(kF32);
      v->set_shape(Dims({"bh", "seq", "seq"}));
    }
    relu = b.Node("Relu", {b.Node("Add", {scaled, added})});
    b.Output(relu);
  }
  void Simplify() {
    auto pass = MakeAlgebraicSimplifyPass();
    for (int round = 0; round < 4; ++round) {
      auto changed = RunPass(*pass, b.graph());
      ASSERT_TRUE(changed.ok()) << changed.status();
      if (!*changed) break;
    }
  }
};

TEST(CanonAlgebraicSimplify, FoldsBaddbmmBase) {
  for (float beta : {0.0f, 1.0f}) {
    Baddbmm g(beta);
    g.Simplify();
    EXPECT_EQ(g.relu->producer()->input(0), g.scaled) << "beta " << beta;
    EXPECT_EQ(CountOps(g.b.graph(), "Add"), 0);
    EXPECT_EQ(CountOps(g.b.graph(), "ConstantOfShape"), 0);
  }
}

TEST(CanonAlgebraicSimplify, KeepsABaseThatIsNotZero) {
  // A NaN fill times beta 0 is NaN everywhere: the fill is rescaled, the Add stays.
  Attributes nan_fill = Attrs({{"value", Floats({1}, {std::numeric_limits<float>::quiet_NaN()})}});
  Baddbmm g(0.0f, nan_fill);
  g.Simplify();
  EXPECT_EQ(CountOps(g.b.graph(), "Add"), 1);
  const Node* fill = nullptr;
  for (const Node* n : g.b.graph().nodes())
    if (n->op_type() == "ConstantOfShape") fill = n;
  ASSERT_NE(fill, nullptr);
  EXPECT_TRUE(std::isnan(*fill->attributes().GetTensor("value")->data<float>()));

  // A fill of 2 with beta 1 stays 2: x + 2 is kept.
  Baddbmm two(1.0f, Attrs({{"value", Floats({1}, {2.0f})}}));
  two.Simplify();
  EXPECT_EQ(CountOps(two.b.graph(), "Add"), 1);
}

TEST(CanonAlgebraicSimplify, NeedsTheFillShapeToMatch) {
  // The zeros' shape is not proven equal to the scores' (bh, seq, seq): the Add may broadcast.
  Baddbmm g(0.0f);
  for (Node* n : g.b.graph().nodes())
    if (n->op_type() == "ConstantOfShape") n->output(0)->set_shape(Dims({"bh", "seq", "other"}));
  g.added->set_shape(Dims({"bh", "seq", "other"}));
  g.Simplify();
  EXPECT_EQ(CountOps(g.b.graph(), "Add"), 1);
}

// Phi and CodeGen cast their present caches to the type they have: the Cast
// goes, and where it made a graph output it becomes Identity, keeping the name.
TEST(CanonAlgebraicSimplify, RemovesACastToTheSameType) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", 4}));
  Value* inner = b.Node("Cast", {x}, Attrs({{"to", static_cast<int64_t>(kF32)}}));
  Value* relu = b.Node("Relu", {inner});
  Value* present = b.Node("Cast", {relu}, Attrs({{"to", static_cast<int64_t>(kF32)}}), "present");
  Value* half = b.Node("Cast", {relu}, Attrs({{"to", static_cast<int64_t>(ElementType::kFloat16)}}));
  b.Output(present);
  b.Output(half);
  const std::string present_name = present->name();
  ASSERT_TRUE(RunPass(*MakeShapeInferencePass(), b.graph()).ok());  // the types the Casts read
  auto pass = MakeAlgebraicSimplifyPass();
  ASSERT_TRUE(*RunPass(*pass, b.graph()));
  EXPECT_EQ(relu->producer()->input(0), x);
  EXPECT_EQ(present->producer()->op_type(), "Identity");
  EXPECT_EQ(present->name(), present_name);
  EXPECT_TRUE(present->is_graph_output());
  EXPECT_EQ(half->producer()->op_type(), "Cast");  // another type: a real conversion
  EXPECT_EQ(CountOps(b.graph(), "Cast"), 1);
}

// CodeGen's key cache: present = Cast(Concat(..)) to its own type, and a Shape
// reads the Concat too. The Shape then reads the present (the same tensor), so
// the Concat has one reader and a fusion may replace it.
TEST(CanonAlgebraicSimplify, OtherReadersReadAnOutputIdentity) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", 4}));
  Value* joined = b.Node("Relu", {x});
  Value* present = b.Node("Cast", {joined}, Attrs({{"to", static_cast<int64_t>(kF32)}}), "present");
  Value* length = b.Node("Shape", {joined});
  b.Output(present);
  b.Output(length);
  ASSERT_TRUE(RunPass(*MakeShapeInferencePass(), b.graph()).ok());
  auto pass = MakeAlgebraicSimplifyPass();
  for (int round = 0; round < 3 && *RunPass(*pass, b.graph()); ++round) {
  }
  EXPECT_EQ(present->producer()->op_type(), "Identity");
  EXPECT_EQ(length->producer()->input(0), present);
  ASSERT_EQ(joined->uses().size(), 1u);
  EXPECT_EQ(joined->uses()[0].node, present->producer());
}

// DistilBERT: masked_fill((mask == 0).view(B, 1, 1, S).expand_as(scores), min)
// exports Where(Expand(m, Shape(scores)), min, scores); the Where broadcasts m
// itself, so the Expand (and its read of the scores' shape) goes.
struct ExpandedMask {
  GraphBuilder b;
  Value* m;
  Value* where;
  explicit ExpandedMask(SymbolicShape m_shape, SymbolicShape target_of = Dims({"batch", 4, "seq", "seq"}),
                        SymbolicShape scores_shape = Dims({"batch", 4, "seq", "seq"})) {
    m = b.Input("m", ElementType::kBool, std::move(m_shape));
    Value* scores = b.Input("scores", kF32, std::move(scores_shape));
    Value* target = b.Input("target", kF32, std::move(target_of));
    Value* expanded = b.Node("Expand", {m, b.Node("Shape", {target})});
    where = b.Node("Where", {expanded, b.Constant("min", ScalarOf<float>(std::numeric_limits<float>::lowest())), scores});
    b.Output(where);
  }
  bool Simplified() {
    auto shapes = MakeShapeInferencePass();
    EXPECT_TRUE(RunPass(*shapes, b.graph()).ok());
    auto pass = MakeAlgebraicSimplifyPass();
    auto changed = RunPass(*pass, b.graph());
    EXPECT_TRUE(changed.ok()) << changed.status();
    return changed.ok() && *changed;
  }
  bool WhereReadsMask() const { return where->producer()->input(0) == m; }
};

TEST(CanonAlgebraicSimplify, DropsAnExpandTheReaderBroadcastsItself) {
  ExpandedMask g(Dims({"batch", 1, 1, "seq"}));
  EXPECT_TRUE(g.Simplified());
  EXPECT_TRUE(g.WhereReadsMask());
  EXPECT_EQ(CountOps(g.b.graph(), "Expand"), 0);
  EXPECT_EQ(CountOps(g.b.graph(), "Shape"), 0);
}

TEST(CanonAlgebraicSimplify, KeepsAnExpandThatShapesTheOutput) {
  // The scores are (seq, seq): the Expand gives the Where its batch and heads.
  ExpandedMask grows(Dims({"batch", 1, 1, "seq"}), Dims({"batch", 4, "seq", "seq"}), Dims({"seq", "seq"}));
  EXPECT_FALSE(grows.Simplified());
  EXPECT_FALSE(grows.WhereReadsMask());
  // m (batch, 1, 1, other) is not proven to broadcast to (batch, 4, seq, seq): the Expand may fail.
  ExpandedMask unproven(Dims({"batch", 1, 1, "other"}));
  EXPECT_FALSE(unproven.Simplified());
  EXPECT_FALSE(unproven.WhereReadsMask());
}

}  // namespace
}  // namespace attune::testing
