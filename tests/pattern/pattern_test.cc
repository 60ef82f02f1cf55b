// The declarative matcher on small hand-built graphs: ops, attributes,
// alternatives, commutative inputs, captures, wrappers, constants, backtracking
// and the reasons it gives when nothing matches.
#include "engine/pattern/pattern.h"

#include "engine/pattern/predicates.h"
#include "gtest/gtest.h"

namespace attune::pattern {
namespace {

// Builds graphs one node at a time: each op returns its output value.
class Builder {
 public:
  Value* Input(const std::string& name, ElementType type = ElementType::kFloat32) {
    Value* v = g.AddValue(name, type, SymbolicShape{Dim::Symbol("batch"), Dim::Known(4)});
    g.AddInput(v);
    return v;
  }
  Value* Scalar(const std::string& name, float x) { return g.AddConstant(name, Tensor::Scalar<float>(x)); }
  Value* Node(const std::string& op, const std::string& name, std::vector<Value*> inputs, Attributes attrs = {},
              ElementType out_type = ElementType::kFloat32) {
    Value* out = g.AddValue(name + "_out", out_type);
    g.AddNode(op, "", name, std::move(inputs), {out}, std::move(attrs));
    return out;
  }
  Graph g;
};

Attributes Perm(std::vector<int64_t> perm) {
  Attributes a;
  a.Set("perm", std::move(perm));
  return a;
}

TEST(PatternTest, MatchesOpTreeAndCapturesValuesAndNodes) {
  Builder b;
  Value* q = b.Input("q");
  Value* k = b.Input("k");
  Value* kt = b.Node("Transpose", "t", {k}, Perm({1, 0}));
  Value* s = b.Node("MatMul", "mm", {q, kt});

  Pattern p = Op("MatMul").CaptureNode("scores").Inputs(
      {Capture("q"), Op("Transpose").Attr("perm", Ints{1, 0}).Inputs({Capture("k")})});
  MatchResult r = MatchValue(p, s);
  ASSERT_TRUE(r.matched) << r.failure;
  EXPECT_EQ(r.match.value("q"), q);
  EXPECT_EQ(r.match.value("k"), k);
  EXPECT_EQ(r.match.node("scores")->name(), "mm");
  ASSERT_EQ(r.match.nodes().size(), 2u);
  EXPECT_EQ(r.match.nodes()[0]->name(), "mm");
  EXPECT_EQ(r.match.nodes()[1]->name(), "t");
}

TEST(PatternTest, ExplainsWrongAttribute) {
  Builder b;
  Value* x = b.Input("x");
  Value* t = b.Node("Transpose", "t", {x}, Perm({0, 1}));
  MatchResult r = MatchValue(Op("Transpose").Attr("perm", Ints{1, 0}).Inputs({Any()}), t);
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.failure, "Transpose 't': attribute perm is [0, 1], expected [1, 0]");
}

TEST(PatternTest, ExplainsWrongOpAndGraphInput) {
  Builder b;
  Value* x = b.Input("x");
  Value* r1 = b.Node("Relu", "relu", {x});
  MatchResult r = MatchValue(Op("MatMul").Inputs({Any(), Any()}), r1);
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.failure, "expected MatMul, found Relu 'relu'");
  r = MatchValue(Op("Relu").Inputs({Op("Exp").Inputs({Any()})}), r1);
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.failure, "'x' is a graph input, expected Exp");
}

TEST(PatternTest, AttrOrUsesTheDefaultWhenAbsent) {
  Builder b;
  Value* x = b.Input("x");
  Value* sm = b.Node("Softmax", "sm", {x});
  EXPECT_TRUE(MatchValue(Op("Softmax").AttrOr("axis", int64_t{-1}, int64_t{-1}), sm).matched);
  MatchResult r = MatchValue(Op("Softmax").AttrOr("axis", int64_t{-1}, int64_t{1}), sm);
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.failure, "Softmax 'sm': attribute axis is 1, expected -1");
  r = MatchValue(Op("Softmax").Attr("axis", int64_t{-1}), sm);
  EXPECT_EQ(r.failure, "Softmax 'sm' has no attribute axis (expected -1)");
}

TEST(PatternTest, AlternativesAndCommutativeInputs) {
  Builder b;
  Value* x = b.Input("x");
  Value* c = b.Scalar("c", 0.25f);
  Value* mul = b.Node("Mul", "mul", {c, x});  // constant first
  Pattern by_div = Op("Div").Inputs({Capture("x"), ScalarConstant("div")});
  Pattern by_mul = Op("Mul").Inputs({Capture("x"), ScalarConstant("mul")});
  Pattern scaled = OneOf({by_div, by_mul});

  MatchResult r = MatchValue(scaled, mul);
  EXPECT_FALSE(r.matched) << "Mul without Commutative() keeps input order";

  Pattern by_mul_any_order = Op("Mul").Commutative().Inputs({Capture("x"), ScalarConstant("mul")});
  r = MatchValue(OneOf({by_div, by_mul_any_order}), mul);
  ASSERT_TRUE(r.matched) << r.failure;
  EXPECT_EQ(r.match.value("x"), x);
  EXPECT_DOUBLE_EQ(*r.match.number("mul"), 0.25);
  EXPECT_FALSE(r.match.number("div").has_value());
}

TEST(PatternTest, SameCaptureTwiceMeansSameTensor) {
  Builder b;
  Value* x = b.Input("x");
  Value* y = b.Input("y");
  Value* same = b.Node("Add", "same", {x, x});
  Value* diff = b.Node("Add", "diff", {x, y});
  Pattern twice = Op("Add").Inputs({Capture("a"), Capture("a")});
  EXPECT_TRUE(MatchValue(twice, same).matched);
  MatchResult r = MatchValue(twice, diff);
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.failure, "'y' is not the tensor bound as a ('x')");
}

TEST(PatternTest, WrappedSkipsIdentityDropoutAndNoOpCast) {
  Builder b;
  Value* x = b.Input("x");
  Value* sm = b.Node("Softmax", "sm", {x});
  Value* id = b.Node("Identity", "id", {sm});
  Value* drop = b.Node("Dropout", "drop", {id});
  Value* cast = b.Node("Cast", "cast", {drop}, [] {
    Attributes a;
    a.Set("to", int64_t{1});
    return a;
  }());
  Pattern p = Wrapped(Op("Softmax").Inputs({Capture("x")}), IdentityWrappers());
  MatchResult r = MatchValue(p, cast);
  ASSERT_TRUE(r.matched) << r.failure;
  EXPECT_EQ(r.match.nodes().size(), 4u);

  // A Cast that changes the type is not a wrapper.
  Value* to_half = b.Node("Cast", "half", {sm}, [] {
    Attributes a;
    a.Set("to", int64_t{10});
    return a;
  }(), ElementType::kFloat16);
  EXPECT_FALSE(MatchValue(p, to_half).matched);
}

TEST(PatternTest, TrainingDropoutIsNotAWrapper) {
  Builder b;
  Value* x = b.Input("x");
  Value* sm = b.Node("Softmax", "sm", {x});
  Value* ratio = b.Scalar("ratio", 0.1f);
  Value* training = b.g.AddConstant("training", Tensor::Scalar<bool>(true));
  Value* drop = b.Node("Dropout", "drop", {sm, ratio, training});
  EXPECT_FALSE(MatchValue(Wrapped(Op("Softmax"), IdentityWrappers()), drop).matched);
}

TEST(PatternTest, OptionalWrapperBuiltFromAFunction) {
  Builder b;
  Value* x = b.Input("x");
  Value* sm = b.Node("Softmax", "sm", {x});
  Value* nan = b.Node("IsNaN", "isnan", {sm}, {}, ElementType::kBool);
  Value* zero = b.Scalar("zero", 0.0f);
  Value* guarded = b.Node("Where", "guard", {nan, zero, sm});
  auto nan_guard = [](Pattern p) {
    return Op("Where").Inputs({Op("IsNaN").Inputs({Capture("guarded")}), ScalarConstant("guard_fill"),
                               Capture("guarded", p)});
  };
  Pattern probs = Optional(Op("Softmax").Inputs({Any()}), nan_guard);
  EXPECT_TRUE(MatchValue(probs, sm).matched);
  MatchResult r = MatchValue(probs, guarded);
  ASSERT_TRUE(r.matched) << r.failure;
  EXPECT_EQ(r.match.value("guarded"), sm);
}

TEST(PatternTest, ScalarConstantChecksAndCaptures) {
  Builder b;
  Value* x = b.Input("x");
  Value* fill = b.Scalar("fill", -1e4f);
  Value* cond = b.Input("cond", ElementType::kBool);
  Value* w = b.Node("Where", "w", {cond, fill, x});
  auto large_negative = [](double v) -> std::optional<std::string> {
    if (v <= -1e4) return std::nullopt;
    return std::string("not a large negative number");
  };
  Pattern p = Op("Where").Inputs({Capture("cond"), ScalarConstant("fill", large_negative), Capture("scores")});
  MatchResult r = MatchValue(p, w);
  ASSERT_TRUE(r.matched) << r.failure;
  EXPECT_DOUBLE_EQ(*r.match.number("fill"), -1e4);

  Value* small = b.Scalar("small", -5.0f);
  Value* w2 = b.Node("Where", "w2", {cond, small, x});
  r = MatchValue(p, w2);
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.failure, "fill 'small' = -5: not a large negative number");

  Value* w3 = b.Node("Where", "w3", {cond, x, x});
  r = MatchValue(p, w3);
  EXPECT_EQ(r.failure, "fill 'x' is not a constant");
}

TEST(PatternTest, ConstantSeenThroughIdentityAndConstantNode) {
  Builder b;
  Value* x = b.Input("x");
  Attributes value;
  value.Set("value", Tensor::Scalar<float>(2.0f));
  Value* c = b.Node("Constant", "c", {}, value);
  Value* id = b.Node("Identity", "id", {c});
  Value* div = b.Node("Div", "div", {x, id});
  MatchResult r = MatchValue(Op("Div").Inputs({Any(), ScalarConstant("d")}), div);
  ASSERT_TRUE(r.matched) << r.failure;
  EXPECT_DOUBLE_EQ(*r.match.number("d"), 2.0);

  Pattern vector_only = ConstantWhere("a 1-D constant", [](const Tensor& t) -> std::optional<std::string> {
    if (t.rank() == 1) return std::nullopt;
    return "rank " + std::to_string(t.rank());
  });
  r = MatchValue(Op("Div").Inputs({Any(), vector_only}), div);
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.failure, "'id_out': rank 0");
}

TEST(PatternTest, AcceptFailureBacktracksIntoOtherAlternatives) {
  Builder b;
  Value* x = b.Input("x");
  Value* y = b.Input("y");
  Value* add = b.Node("Add", "add", {x, y});
  // Both orders match structurally; only the second satisfies the final check.
  Pattern p = Op("Add").Commutative().Inputs({Capture("first"), Capture("second")});
  MatchResult r = MatchValue(p, add, [&](const Match& m) -> std::optional<std::string> {
    if (m.value("first") == y) return std::nullopt;
    return std::string("first is not y");
  });
  ASSERT_TRUE(r.matched) << r.failure;
  EXPECT_EQ(r.match.value("first"), y);
  EXPECT_EQ(r.match.value("second"), x);

  r = MatchValue(p, add, [](const Match&) -> std::optional<std::string> { return std::string("never"); });
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.failure, "never") << "a final check counts as the furthest failure";
}

TEST(PatternTest, FailureFromTheAttemptThatGotFurthest) {
  Builder b;
  Value* x = b.Input("x");
  Value* t = b.Node("Transpose", "t", {x}, Perm({0, 1}));
  Value* e = b.Node("Exp", "e", {t});
  // The Exp branch gets one node further than the Log branch.
  Pattern p = OneOf({Op("Log").Inputs({Any()}), Op("Exp").Inputs({Op("Transpose").Attr("perm", Ints{1, 0})})});
  MatchResult r = MatchValue(p, e);
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.failure, "Transpose 't': attribute perm is [0, 1], expected [1, 0]");
}

TEST(PatternTest, ExtraInputsMustBeAbsentUnlessIgnored) {
  Builder b;
  Value* x = b.Input("x");
  Value* ratio = b.Scalar("ratio", 0.5f);
  Value* drop = b.Node("Dropout", "drop", {x, ratio});
  MatchResult r = MatchValue(Op("Dropout").Inputs({Any()}), drop);
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.failure, "Dropout 'drop' has 2 inputs, expected 1");
  EXPECT_TRUE(MatchValue(Op("Dropout").Inputs({Any()}).IgnoreExtraInputs(), drop).matched);
}

TEST(PatternTest, BuildersDoNotChangeTheOriginal) {
  Builder b;
  Value* x = b.Input("x");
  Value* t = b.Node("Transpose", "t", {x}, Perm({1, 0}));
  OpPattern base = Op("Transpose");
  OpPattern strict = base.Attr("perm", Ints{0, 1});
  EXPECT_TRUE(MatchValue(base, t).matched);
  EXPECT_FALSE(MatchValue(strict, t).matched);
}

TEST(PatternTest, NodeCheckReasonNamesTheNode) {
  Builder b;
  Value* x = b.Input("x");
  Value* r1 = b.Node("Relu", "relu", {x});
  OpPattern p = Op("Relu").Check([](const Node&, const Match&) -> std::optional<std::string> {
    return std::string("not today");
  });
  MatchResult r = MatchValue(p, r1);
  EXPECT_EQ(r.failure, "Relu 'relu': not today");
}

}  // namespace
}  // namespace attune::pattern
