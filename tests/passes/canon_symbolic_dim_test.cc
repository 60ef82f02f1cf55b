#include "engine/passes/symbolic_dim.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace attune {
namespace {

Dim S(const char* s) { return Dim::Symbol(s); }
Dim K(int64_t v) { return Dim::Known(v); }

TEST(CanonSymbolicDim, ProductsAreCanonicalWhateverTheOrder) {
  EXPECT_EQ(DimMul(S("seq"), S("batch")).symbol(), "batch*seq");
  EXPECT_EQ(DimMul(S("batch"), S("seq")).symbol(), "batch*seq");
  EXPECT_EQ(DimProduct({S("seq"), K(12), S("batch")}).symbol(), "12*batch*seq");
  EXPECT_EQ(DimMul(S("seq"), S("batch")), S("batch*seq"));
}

TEST(CanonSymbolicDim, SumsAndDifferences) {
  EXPECT_EQ(DimAdd(S("seq"), S("past")).symbol(), "past+seq");
  EXPECT_EQ(DimAdd(S("seq"), K(1)).symbol(), "seq+1");
  const Dim total = DimAdd(S("past"), S("seq"));
  EXPECT_EQ(DimSub(total, S("past")).symbol(), "seq");
  EXPECT_EQ(DimSub(S("seq"), S("seq")).value(), 0);
  EXPECT_EQ(DimSub(S("seq"), K(1)).symbol(), "seq-1");
}

TEST(CanonSymbolicDim, ExactDivisionOnly) {
  const Dim all = DimProduct({S("batch"), S("seq"), K(768)});
  EXPECT_EQ(DimDivExact(all, DimProduct({S("batch"), S("seq"), K(12)})).value(), 64);
  EXPECT_EQ(DimDivExact(all, K(64)).symbol(), "12*batch*seq");
  EXPECT_TRUE(DimDivExact(all, K(5)).is_unknown());               // 768 is not a multiple of 5
  EXPECT_TRUE(DimDivExact(all, S("heads")).is_unknown());          // no such factor
  EXPECT_TRUE(DimDivExact(all, DimAdd(S("a"), S("b"))).is_unknown());  // not a monomial
}

TEST(CanonSymbolicDim, ComputedSymbolsParseBack) {
  for (const char* text : {"batch*seq", "past+seq", "12*batch*seq", "seq-1", "2*a*b+3*c+4"}) {
    auto e = ParseDimExpr(text);
    ASSERT_TRUE(e.has_value()) << text;
    EXPECT_EQ(e->ToString(), text);
  }
}

TEST(CanonSymbolicDim, OddSymbolNamesStayOpaque) {
  // A name the expression grammar cannot read is one symbol, printed as is
  // alone and in parentheses inside a product.
  EXPECT_EQ(DimMul(S("unk__/Range_out_0"), S("batch")).symbol(), "batch*(unk__/Range_out_0)");
  EXPECT_EQ(DimMul(S("unk__/Range_out_0"), S("batch")), S("(unk__/Range_out_0)*batch"));
  EXPECT_EQ(DimMul(S("unk__/Range_out_0"), K(1)).symbol(), "unk__/Range_out_0");
  EXPECT_NE(S("a"), S("b"));
  EXPECT_NE(Dim(), Dim());
}

TEST(CanonSymbolicDim, Sign) {
  EXPECT_TRUE(S("past+seq").expr()->IsNonNegative());
  EXPECT_FALSE(S("seq-1").expr()->IsNonNegative());
  EXPECT_EQ(S("seq+3").expr()->constant_term(), 3);
}


TEST(CanonSymbolicDim, MinimumAndBroadcasting) {
  const Dim seq = Dim::Symbol("seq");
  const Dim m = DimMin(seq, Dim::Known(64));
  EXPECT_EQ(m.symbol(), "min(64,seq)");
  EXPECT_EQ(DimMin(Dim::Known(64), seq).symbol(), "min(64,seq)");
  EXPECT_EQ(DimMin(Dim::Known(3), Dim::Known(5)).value(), 3);
  EXPECT_TRUE(BroadcastsInto(m, seq));
  EXPECT_FALSE(BroadcastsInto(seq, m));
  EXPECT_FALSE(BroadcastsInto(m, Dim::Symbol("other")));
  EXPECT_FALSE(BroadcastsInto(DimMin(seq, Dim::Known(0)), seq));  // min(seq, 0) is 0, seq may be 1
  EXPECT_FALSE(BroadcastsInto(DimMin(seq, Dim::Symbol("n")), seq));  // n may be 0
  EXPECT_EQ(DimMul(m, Dim::Symbol("batch")), Dim::Symbol("batch*(min(64,seq))"));
  // Dims are never negative: the one the other exceeds by such a sum is the minimum.
  EXPECT_EQ(DimMin(seq, Dim::Symbol("past+seq")), seq);  // T5's position_bias[:, :, -seq:]
  EXPECT_EQ(DimMin(Dim::Symbol("2*past+seq+1"), Dim::Symbol("past")), Dim::Symbol("past"));
  EXPECT_EQ(DimMin(seq, Dim::Known(0)), Dim::Known(0));
  EXPECT_EQ(DimMin(seq, Dim::Symbol("past")).symbol(), "min(past,seq)");
  EXPECT_TRUE(absl::StartsWith(DimMin(seq, Dim::Symbol("total-past")).symbol(), "min("));  // not a sum of dims
}

}  // namespace
}  // namespace attune
