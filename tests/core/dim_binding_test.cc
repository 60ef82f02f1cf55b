// The value of a symbolic dim under a binding, read from its expression:
// bound atoms, minimums, a whole spelling bound as such, and nullopt for
// what cannot be known (unbound, negative, overflow).
#include "engine/rewrite/dim_binding.h"

#include <gtest/gtest.h>

namespace attune {
namespace {

Dim S(const std::string& s) { return Dim::Symbol(s); }

TEST(DimBindingTest, EvaluatesExpressions) {
  DimBinding b;
  b.Bind("past", 3);
  b.Bind("seq", 4);
  EXPECT_EQ(b.Evaluate(S("past+seq")), 7);
  EXPECT_EQ(b.Evaluate(S("seq + past")), 7);
  EXPECT_EQ(b.Evaluate(S("12*seq")), 48);
  EXPECT_EQ(b.Evaluate(S("min(64,seq)")), 4);
  EXPECT_EQ(b.Evaluate(S("2*(min(2,past))")), 4);
  EXPECT_EQ(b.Evaluate(Dim::Known(9)), 9);
  EXPECT_EQ(b.Evaluate(S("seq-5")), std::nullopt);  // negative
  EXPECT_EQ(b.Evaluate(S("batch*seq")), std::nullopt);  // batch unbound
  EXPECT_EQ(b.Evaluate(Dim()), std::nullopt);
  EXPECT_EQ(b.Evaluate(SymbolicShape{S("seq"), Dim::Known(2)}), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(b.Evaluate(SymbolicShape{S("seq"), S("batch")}), std::nullopt);
}

TEST(DimBindingTest, AWholeSpellingBoundWins) {
  DimBinding b;
  b.Bind("past", 3);
  b.Bind("seq", 4);
  b.Bind("past+seq", 10);
  b.Bind("min(64,seq)", 6);
  EXPECT_EQ(b.Evaluate(S("seq+past")), 10);
  EXPECT_EQ(b.Evaluate(S("min(seq,64)")), 6);
  EXPECT_EQ(b.Evaluate(S("2*(min(64,seq))")), 12);
}

TEST(DimBindingTest, OverflowIsUnknown) {
  DimBinding b;
  b.Bind("seq", INT64_MAX / 2 + 1);
  b.Bind("one", 1);
  EXPECT_EQ(b.Evaluate(S("2*seq")), std::nullopt);
  EXPECT_EQ(b.Evaluate(S("seq*seq")), std::nullopt);
  EXPECT_EQ(b.Evaluate(S("seq+seq")), std::nullopt);
  EXPECT_EQ(b.Evaluate(S("9223372036854775807+one")), std::nullopt);
}

TEST(DimBindingTest, HostileSymbolsAreOpaque) {
  DimBinding b;
  b.Bind("a", 1);
  for (const char* text : {"a**a", "a+", "()", "min(a,", "99999999999999999999"}) {
    EXPECT_EQ(b.Evaluate(S(text)), std::nullopt) << text;
    EXPECT_EQ(SymbolsOf(S(text)), (std::set<std::string>{text})) << text;
    EXPECT_FALSE(IsPlainSymbol(S(text))) << text;
  }
  b.Bind("a**a", 5);
  EXPECT_EQ(b.Evaluate(S("a**a")), 5);  // bound under its spelling
}

TEST(DimBindingTest, SymbolsAndPlainSymbols) {
  EXPECT_EQ(SymbolsOf(S("past+seq")), (std::set<std::string>{"past", "seq"}));
  EXPECT_EQ(SymbolsOf(S("12*batch*seq-1")), (std::set<std::string>{"batch", "seq"}));
  EXPECT_EQ(SymbolsOf(S("batch*(min(64,seq))")), (std::set<std::string>{"batch", "min(64,seq)"}));
  EXPECT_EQ(SymbolsOf(S("batch*(unk__/Range_out_0)")), (std::set<std::string>{"batch", "unk__/Range_out_0"}));
  EXPECT_EQ(SymbolsOf(Dim::Named("unk__a-b_0")), (std::set<std::string>{"unk__a-b_0"}));
  EXPECT_TRUE(SymbolsOf(Dim::Known(3)).empty());
  EXPECT_TRUE(IsPlainSymbol(S("seq")));
  EXPECT_TRUE(IsPlainSymbol(S("(seq)")));
  EXPECT_FALSE(IsPlainSymbol(S("past+seq")));
  EXPECT_FALSE(IsPlainSymbol(S("2*seq")));
  EXPECT_FALSE(IsPlainSymbol(S("unk__/Range_out_0")));
  EXPECT_FALSE(IsPlainSymbol(S("min(64,seq)")));
  EXPECT_FALSE(IsPlainSymbol(Dim::Known(3)));
}

}  // namespace
}  // namespace attune
