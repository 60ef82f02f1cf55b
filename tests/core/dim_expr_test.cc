// A symbolic Dim is parsed once into a DimExpr and printed by DimExpr alone:
// round trips keep the spellings the shape rules print, equal expressions
// are equal dims whatever their spelling, and text that is not an expression
// (or is hostile) stays one opaque symbol without crashing.
#include "core/ir/dim_expr.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "core/ir/dim.h"

namespace attune {
namespace {

Dim S(const std::string& s) { return Dim::Symbol(s); }

TEST(DimExprTest, CanonicalSpellingsRoundTrip) {
  for (const char* text : {"seq", "batch*seq", "past+seq", "12*batch*seq", "seq-1", "-seq", "2*a*b+3*c+4",
                           "min(64,seq)", "batch*(min(64,seq))", "min(64,past+seq)", "batch*(unk__/Range_out_0)",
                           "unk__/Range_out_0", "seq len"}) {
    const Dim d = S(text);
    ASSERT_TRUE(d.is_symbol()) << text;
    EXPECT_EQ(d.symbol(), text);
    EXPECT_EQ(d.ToString(), text);
    EXPECT_EQ(S(d.symbol()), d) << text;  // the print reads back as the same expression
  }
}

TEST(DimExprTest, EqualExpressionsAreEqualDims) {
  EXPECT_EQ(S("seq+past"), S("past+seq"));
  EXPECT_EQ(S("seq+past").symbol(), "past+seq");
  EXPECT_EQ(S("seq * 12").symbol(), "12*seq");
  EXPECT_EQ(S("past_sequence_length + 1").symbol(), "past_sequence_length+1");
  EXPECT_EQ(S("(seq)"), S("seq"));
  EXPECT_EQ(S("min(seq,64)"), S("min(64,seq)"));
  EXPECT_EQ(S("(min(64,seq))*batch"), S("batch*(min(64,seq))"));
  EXPECT_EQ(S("(unk__/Range_out_0)*batch").symbol(), "batch*(unk__/Range_out_0)");
  EXPECT_NE(S("seq"), S("past"));
  EXPECT_NE(S("seq+1"), S("seq"));
  EXPECT_NE(Dim(), Dim());  // nothing is known about either
  EXPECT_EQ(Dim::Known(4), Dim::Known(4));
  EXPECT_NE(Dim::Known(4), S("seq"));
}

TEST(DimExprTest, ParenthesesHoldOneAtom) {
  // "(a+b)" is one atom named "a+b", not the sum: the printer parenthesises
  // names that are not identifiers, and they must read back as one name.
  const Dim grouped = S("(a+b)*c");
  ASSERT_NE(grouped.expr(), nullptr);
  EXPECT_EQ(grouped.expr()->terms().size(), 1u);
  EXPECT_NE(grouped, S("a*c+b*c"));
  // A name with operators in it, made without parsing, prints parenthesised
  // in a product and reads back as the same name.
  const Dim named = Dim::Named("unk__x-y_0");
  ASSERT_NE(named.expr()->single_atom(), nullptr);
  const std::optional<DimExpr> product = DimExpr::Mul(*named.expr(), DimExpr::Symbol("batch"));
  ASSERT_TRUE(product.has_value());
  EXPECT_EQ(product->ToString(), "batch*(unk__x-y_0)");
  EXPECT_EQ(ParseDimExpr(product->ToString()), product);
}

TEST(DimExprTest, AMinimumKeepsItsArguments) {
  const Dim m = S("min(64,seq)");
  const DimAtom* atom = m.expr()->single_atom();
  ASSERT_NE(atom, nullptr);
  ASSERT_TRUE(atom->is_min());
  EXPECT_EQ(atom->min_first(), DimExpr::Constant(64));
  EXPECT_EQ(atom->min_second(), DimExpr::Symbol("seq"));
  EXPECT_EQ(DimExpr::Min(DimExpr::Constant(3), DimExpr::Constant(5)), DimExpr::Constant(3));
  EXPECT_EQ(DimExpr::Min(DimExpr::Symbol("seq"), DimExpr::Symbol("seq")), DimExpr::Symbol("seq"));
}

TEST(DimExprTest, ConstantTextIsAName) {
  // An ONNX dim_param is a name: "5" or "seq-seq" do not become numbers.
  for (const char* text : {"5", "seq-seq", "0*seq"}) {
    const Dim d = S(text);
    EXPECT_TRUE(d.is_symbol()) << text;
    EXPECT_EQ(d.symbol(), text);
  }
}

TEST(DimExprTest, HostileTextStaysOneOpaqueSymbol) {
  const std::string deep_parens = std::string(10000, '(') + "seq" + std::string(10000, ')');
  std::string deep_min = "seq";
  for (int i = 0; i < 1000; ++i) deep_min = "min(" + deep_min + ",1)";
  const std::string unclosed = std::string(5000, '(') + "seq";
  for (const std::string& text :
       {std::string("99999999999999999999"), std::string("99999999999999999999*seq"),
        std::string("9223372036854775807*seq*2+9223372036854775807*seq*2"), std::string("+"), std::string("*"),
        std::string("-"), std::string("()"), std::string(")("), std::string("(("), std::string("min("),
        std::string("min(a,)"), std::string("min(a,b,c)"), std::string("a**b"), std::string("a+"),
        std::string("--a"), std::string("seq)"), std::string("f(x)"), deep_min, unclosed}) {
    const Dim d = S(text);
    ASSERT_TRUE(d.is_symbol()) << text.substr(0, 40);
    EXPECT_EQ(d.symbol(), text) << text.substr(0, 40);
    ASSERT_NE(d.expr(), nullptr);
    EXPECT_NE(d.expr()->single_atom(), nullptr) << text.substr(0, 40);
    EXPECT_FALSE(ParseDimExpr(text).has_value()) << text.substr(0, 40);
  }
  // Deep parentheses around a name are read down to the nesting limit, then kept as one name.
  const Dim d = S(deep_parens);
  ASSERT_TRUE(d.is_symbol());
  EXPECT_NE(d.expr()->single_atom(), nullptr);
  EXPECT_TRUE(S("").is_unknown());
  EXPECT_TRUE(Dim::Named("").is_unknown());
}

TEST(DimExprTest, NestedMinimumsStopAtTheLimit) {
  DimExpr e = DimExpr::Symbol("seq");
  for (int i = 0; i < 200; ++i) e = DimExpr::Min(e, DimExpr::Symbol(absl::StrCat("n", i)));
  EXPECT_LE(e.nesting(), DimExpr::kMaxNesting);
  EXPECT_FALSE(e.ToString().empty());
  EXPECT_EQ(e, e);
}

TEST(DimExprTest, OverflowIsNotAnExpression) {
  const DimExpr big = DimExpr::Constant(INT64_MAX);
  EXPECT_FALSE(DimExpr::Add(big, DimExpr::Constant(1)).has_value());
  EXPECT_FALSE(DimExpr::Mul(big, DimExpr::Constant(2)).has_value());
  EXPECT_FALSE(DimExpr::Sub(DimExpr::Constant(INT64_MIN), DimExpr::Constant(1)).has_value());
  EXPECT_FALSE(DimExpr::DivExact(DimExpr::Constant(INT64_MIN), DimExpr::Constant(-1)).has_value());
}

TEST(DimExprTest, EvaluatesUnderALookup) {
  auto lookup = [](const std::string& name) -> std::optional<int64_t> {
    if (name == "seq") return 7;
    if (name == "past") return 5;
    if (name == "huge") return INT64_MAX / 2 + 1;
    return std::nullopt;
  };
  EXPECT_EQ(ParseDimExpr("past+seq")->Evaluate(lookup), 12);
  EXPECT_EQ(ParseDimExpr("12*seq-past")->Evaluate(lookup), 79);
  EXPECT_EQ(ParseDimExpr("min(64,past+seq)")->Evaluate(lookup), 12);
  EXPECT_EQ(ParseDimExpr("seq*(unknown)")->Evaluate(lookup), std::nullopt);
  EXPECT_EQ(ParseDimExpr("2*huge")->Evaluate(lookup), std::nullopt);
  EXPECT_EQ(ParseDimExpr("huge*huge")->Evaluate(lookup), std::nullopt);
}

TEST(DimExprTest, RenamedPrintKeepsNumbersAndOrder) {
  std::vector<std::string> seen;
  auto rename = [&](const std::string& name) {
    seen.push_back(name);
    return absl::StrCat("$", seen.size() - 1);
  };
  EXPECT_EQ(ParseDimExpr("12*batch*seq+3")->ToString(rename), "12*$0*$1+3");
  EXPECT_EQ(ParseDimExpr("batch*(min(64,seq))")->ToString(rename), "$2*(min(64,$3))");
  EXPECT_EQ(seen, (std::vector<std::string>{"batch", "seq", "batch", "seq"}));
}

}  // namespace
}  // namespace attune
