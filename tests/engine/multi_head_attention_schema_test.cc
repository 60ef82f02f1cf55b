// The fused attention op's schema: every name parses back to its value, a
// wrong name is refused with the allowed ones, and the written names are the
// ones models saved with attune.MultiHeadAttention already hold.
#include "core/schema/multi_head_attention.h"

#include <gtest/gtest.h>

#include "core/ir/graph.h"

namespace attune::mha {
namespace {

template <class E>
void ExpectRoundTrip(std::initializer_list<E> values, absl::StatusOr<E> (*parse)(std::string_view)) {
  for (E e : values) {
    auto parsed = parse(ToString(e));
    ASSERT_TRUE(parsed.ok()) << ToString(e) << ": " << parsed.status();
    EXPECT_EQ(*parsed, e) << ToString(e);
  }
}

TEST(MultiHeadAttentionSchema, EveryNameParsesBackToItsValue) {
  ExpectRoundTrip({MaskedRows::kZeros, MaskedRows::kNaN, MaskedRows::kUniform, MaskedRows::kFills},
                  ParseMaskedRows);
  ExpectRoundTrip({KeyPaddingValues::kBinary, KeyPaddingValues::kNonzero}, ParseKeyPaddingValues);
  ExpectRoundTrip({MaskKind::kNone, MaskKind::kCausal, MaskKind::kWindow, MaskKind::kExplicit, MaskKind::kPadding,
                   MaskKind::kCausalPadding, MaskKind::kWindowPadding},
                  ParseMaskKind);
}

// Saved models and the JSON report carry these strings: they may not change.
TEST(MultiHeadAttentionSchema, NamesAreTheSavedOnes) {
  EXPECT_STREQ(ToString(MaskedRows::kZeros), "zeros");
  EXPECT_STREQ(ToString(MaskedRows::kNaN), "nan");
  EXPECT_STREQ(ToString(MaskedRows::kUniform), "uniform");
  EXPECT_STREQ(ToString(MaskedRows::kFills), "fills");
  EXPECT_STREQ(ToString(KeyPaddingValues::kBinary), "binary");
  EXPECT_STREQ(ToString(KeyPaddingValues::kNonzero), "nonzero");
  EXPECT_STREQ(ToString(MaskKind::kCausalPadding), "causal+padding");
  EXPECT_STREQ(ToString(MaskKind::kWindowPadding), "window+padding");
  EXPECT_STREQ(kNumHeads, "num_heads");
  EXPECT_STREQ(kKvNumHeads, "kv_num_heads");
  EXPECT_STREQ(kMaskedRows, "masked_rows");
  EXPECT_STREQ(kHiddenFills, "hidden_fills");
  EXPECT_STREQ(kKeyPadding, "key_padding");
  EXPECT_EQ(kInputKeyPadding, 6);
  EXPECT_EQ(kInputSinks, 7);
  EXPECT_EQ(kNumInputs, 8);
}

TEST(MultiHeadAttentionSchema, AWrongNameIsRefusedWithTheAllowedOnes) {
  auto rows = ParseMaskedRows("zero");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rows.status().message(), R"(masked_rows must be "zeros", "nan", "uniform" or "fills" (got "zero"))");
  auto padding = ParseKeyPaddingValues("");
  ASSERT_FALSE(padding.ok());
  EXPECT_EQ(padding.status().message(), R"(key_padding must be "binary" or "nonzero" (got ""))");
  EXPECT_FALSE(ParseMaskKind("causal+window").ok());
}

TEST(MultiHeadAttentionSchema, KeyPaddingIsAddedToAndTakenFromTheStructuralMask) {
  for (MaskKind structural : {MaskKind::kNone, MaskKind::kCausal, MaskKind::kWindow}) {
    const MaskKind padded = WithKeyPadding(structural);
    EXPECT_NE(padded, structural);
    EXPECT_EQ(WithoutKeyPadding(padded), structural);
    EXPECT_EQ(WithoutKeyPadding(structural), structural);
  }
  EXPECT_EQ(WithKeyPadding(MaskKind::kNone), MaskKind::kPadding);
  EXPECT_EQ(WithKeyPadding(MaskKind::kExplicit), MaskKind::kExplicit);
}

TEST(MultiHeadAttentionSchema, APositionBiasAddsItsSuffixAndParsesBackToTheKind) {
  for (MaskKind kind : {MaskKind::kCausal, MaskKind::kWindow, MaskKind::kPadding, MaskKind::kCausalPadding,
                        MaskKind::kWindowPadding}) {
    const std::string name = ToStringWithBias(kind);
    EXPECT_EQ(name, std::string(ToString(kind)) + "+bias");
    auto parsed = ParseMaskKind(name);
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_FALSE(ParseMaskKind("explicit+bias").ok());
  EXPECT_FALSE(ParseMaskKind("+bias").ok());
  EXPECT_FALSE(ParseMaskKind("causal+bias+bias").ok());
}

TEST(MultiHeadAttentionSchema, RecognisesTheOpByDomainAndType) {
  Graph g;
  Value* x = g.AddValue("x", ElementType::kFloat32, std::nullopt);
  Value* y = g.AddValue("y", ElementType::kFloat32, std::nullopt);
  Value* z = g.AddValue("z", ElementType::kFloat32, std::nullopt);
  const Node* fused = g.AddNode(kOpType, kDomain, "fused", {x, x, x}, {y}, {});
  const Node* other = g.AddNode(kOpType, "com.example", "other", {x, x, x}, {z}, {});
  EXPECT_TRUE(IsMultiHeadAttention(*fused));
  EXPECT_FALSE(IsMultiHeadAttention(*other));
}

}  // namespace
}  // namespace attune::mha
