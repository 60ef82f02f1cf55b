// The tokenizer.json components one at a time, on the examples the format's
// documentation gives, and the errors a bad file or text gets.
#include "attune/tokenizer.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/tokenizer/fixtures.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"

namespace attune {
namespace {

using nlohmann::json;

std::vector<std::string> PreTokenize(const json& spec, const std::string& text) {
  auto pre = tok::MakePreTokenizer(spec);
  EXPECT_TRUE(pre.ok()) << pre.status();
  if (!pre.ok()) return {};
  std::vector<tok::Piece> pieces{{text, true}};
  EXPECT_TRUE((*pre)->PreTokenize(pieces).ok());
  std::vector<std::string> out;
  for (const auto& p : pieces) out.push_back(p.text);
  return out;
}

std::string Normalize(const json& spec, std::string text) {
  auto n = tok::MakeNormalizer(spec);
  EXPECT_TRUE(n.ok()) << n.status();
  if (n.ok()) EXPECT_TRUE((*n)->Normalize(text).ok());
  return text;
}

using Parts = std::vector<std::string>;

TEST(PreTokenizers, SplitBehaviors) {
  auto split = [](const char* behavior) {
    return PreTokenize({{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}, {"invert", false}},
                       "the-final--countdown");
  };
  EXPECT_EQ(split("Removed"), (Parts{"the", "final", "countdown"}));
  EXPECT_EQ(split("Isolated"), (Parts{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(split("MergedWithPrevious"), (Parts{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(split("MergedWithNext"), (Parts{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(split("Contiguous"), (Parts{"the", "-", "final", "--", "countdown"}));
}

TEST(PreTokenizers, SplitRegexInverted) {
  // With invert the matches are the pieces kept and the rest is the delimiter.
  EXPECT_EQ(PreTokenize({{"type", "Split"}, {"pattern", {{"Regex", "\\p{L}+"}}}, {"behavior", "Removed"}, {"invert", true}},
                        "héllo, wörld 42"),
            (Parts{"héllo", "wörld"}));
}

TEST(PreTokenizers, ByteLevelSplitsAndMapsBytes) {
  EXPECT_EQ(PreTokenize({{"type", "ByteLevel"}, {"add_prefix_space", true}}, "Hello world!"),
            (Parts{"\u0120Hello", "\u0120world", "!"}));
}

TEST(PreTokenizers, MetaspacePrependScheme) {
  auto meta = [](const char* scheme) { return json{{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", scheme}, {"split", true}}; };
  EXPECT_EQ(PreTokenize(meta("always"), "Hey friend"), (Parts{"\u2581Hey", "\u2581friend"}));
  EXPECT_EQ(PreTokenize(meta("never"), "Hey friend"), (Parts{"Hey", "\u2581friend"}));
  // "first" prepends only to the piece at the start of the input.
  auto pre = tok::MakePreTokenizer(meta("first"));
  ASSERT_TRUE(pre.ok());
  std::vector<tok::Piece> pieces{{"a b", true}, {"c", false}};
  ASSERT_TRUE((*pre)->PreTokenize(pieces).ok());
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].text, "\u2581a");
  EXPECT_EQ(pieces[2].text, "c");
}

TEST(PreTokenizers, WhitespaceDigitsPunctuation) {
  EXPECT_EQ(PreTokenize({{"type", "Whitespace"}}, "Hey man!! 42"), (Parts{"Hey", "man", "!!", "42"}));
  EXPECT_EQ(PreTokenize({{"type", "WhitespaceSplit"}}, "Hey  man!!\t42"), (Parts{"Hey", "man!!", "42"}));
  EXPECT_EQ(PreTokenize({{"type", "Digits"}, {"individual_digits", true}}, "a123"), (Parts{"a", "1", "2", "3"}));
  EXPECT_EQ(PreTokenize({{"type", "Digits"}, {"individual_digits", false}}, "a123b"), (Parts{"a", "123", "b"}));
  EXPECT_EQ(PreTokenize({{"type", "Punctuation"}}, "Hey, you!"), (Parts{"Hey", ",", " you", "!"}));
  EXPECT_EQ(PreTokenize({{"type", "Sequence"}, {"pretokenizers", {{{"type", "WhitespaceSplit"}}, {{"type", "Punctuation"}}}}}, "Hey, you!"),
            (Parts{"Hey", ",", "you", "!"}));
}

TEST(Normalizers, UnicodeFormsCaseAndReplace) {
  EXPECT_EQ(Normalize({{"type", "NFKC"}}, "\uFB01 \u2460 \uFF21"), "fi 1 A");
  EXPECT_EQ(Normalize({{"type", "NFC"}}, "e\u0301"), "\u00e9");
  EXPECT_EQ(Normalize({{"type", "NFD"}}, "\u00e9"), "e\u0301");
  EXPECT_EQ(Normalize({{"type", "Sequence"}, {"normalizers", {{{"type", "NFD"}}, {{"type", "StripAccents"}}, {{"type", "Lowercase"}}}}},
                      "Ÿ Café ÀB"),
            "y cafe ab");
  EXPECT_EQ(Normalize({{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", " "}}, "a   b  c d"), "a b c d");
  EXPECT_EQ(Normalize({{"type", "Prepend"}, {"prepend", "\u2581"}}, "x"), "\u2581x");
  EXPECT_EQ(Normalize({{"type", "Prepend"}, {"prepend", "\u2581"}}, ""), "");
  EXPECT_EQ(Normalize({{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}}, " \t x y \n"), "x y");
  EXPECT_EQ(Normalize({{"type", "BertNormalizer"}, {"lowercase", true}}, "Héllo\t世界"), "hello  世  界 ");
}

json WordPieceTokenizer() {
  return {{"model",
           {{"type", "WordPiece"},
            {"unk_token", "[UNK]"},
            {"continuing_subword_prefix", "##"},
            {"vocab", {{"[UNK]", 0}, {"[CLS]", 1}, {"[SEP]", 2}, {"un", 3}, {"##aff", 4}, {"##able", 5}, {"hello", 6}, {"!", 7}}}}},
          {"normalizer", {{"type", "BertNormalizer"}, {"lowercase", true}}},
          {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
          {"post_processor", {{"type", "BertProcessing"}, {"cls", {"[CLS]", 1}}, {"sep", {"[SEP]", 2}}}},
          {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}}};
}

TEST(Models, WordPieceLongestPrefixFirst) {
  auto t = Tokenizer::FromJson(WordPieceTokenizer().dump());
  ASSERT_TRUE(t.ok()) << t.status();
  auto ids = (*t)->Encode("Unaffable hello! xyz");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<int64_t>{1, 3, 4, 5, 6, 7, 0, 2}));
  EXPECT_EQ(*(*t)->Decode({3, 4, 5, 6, 7}), "unaffable hello!");
}

TEST(Decoders, ByteFallbackFuseStrip) {
  json spec = {{"model", {{"type", "BPE"}, {"byte_fallback", true}, {"vocab", {{"<0xE2>", 0}, {"<0x82>", 1}, {"<0xAC>", 2}, {"\u2581a", 3}}}, {"merges", json::array()}}},
               {"decoder", {{"type", "Sequence"}, {"decoders", {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                                                               {{"type", "ByteFallback"}}, {{"type", "Fuse"}},
                                                               {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}}};
  auto t = Tokenizer::FromJson(spec.dump());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*(*t)->Decode({3, 0, 1, 2, 3}), "a\u20ac a");
  // A character cut off at the end shows as U+FFFD; the raw bytes stay available.
  EXPECT_EQ(*(*t)->Decode({3, 0, 1}), "a\uFFFD");
  EXPECT_EQ(*(*t)->DecodeBytes({3, 0, 1}), "a\xE2\x82");
  auto ids = (*t)->Encode("\u20ac", false);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<int64_t>{0, 1, 2}));
}

TEST(AddedTokens, StripAndSingleWord) {
  json spec = {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {" ", 1}, {"b", 2}}}, {"merges", json::array()}}},
               {"added_tokens", {{{"id", 3}, {"content", "<m>"}, {"lstrip", true}, {"rstrip", true}, {"special", true}, {"normalized", false}},
                                 {{"id", 4}, {"content", "ab"}, {"single_word", true}, {"special", false}, {"normalized", false}}}}};
  auto t = Tokenizer::FromJson(spec.dump());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*(*t)->Encode("a  <m>  b"), (std::vector<int64_t>{0, 3, 2}));
  EXPECT_EQ(*(*t)->Encode("ab aab"), (std::vector<int64_t>{4, 1, 0, 0, 2}));
  EXPECT_TRUE((*t)->IsSpecial(3));
  EXPECT_FALSE((*t)->IsSpecial(4));
  EXPECT_EQ(*(*t)->Decode({0, 3, 2}, /*skip_special_tokens=*/true), "a b");
}

void ExpectError(const json& spec, const std::string& words) {
  auto t = Tokenizer::FromJson(spec.dump());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(words), std::string::npos) << t.status();
}

TEST(BadInput, FilesNameWhatIsWrong) {
  const json bpe = {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", json::array()}};
  ExpectError({{"model", {{"type", "Markov"}}}}, "unsupported model type \"Markov\"");
  ExpectError({{"model", bpe}, {"normalizer", {{"type", "Klingon"}}}}, "unsupported normalizer type \"Klingon\"");
  ExpectError({{"model", bpe}, {"pre_tokenizer", {{"type", "Chop"}}}}, "unsupported pre_tokenizer type \"Chop\"");
  ExpectError({{"model", bpe}, {"decoder", {{"type", "Guess"}}}}, "unsupported decoder type \"Guess\"");
  ExpectError({{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", {"a b"}}}}}, "not in the vocab");
  ExpectError({{"model", {{"type", "BPE"}, {"vocab", {{"a", -4}}}, {"merges", json::array()}}}}, "out of range");
  ExpectError({{"model", bpe}, {"pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "(["}}}}}}, "does not compile");
  ExpectError({{"nothing", 1}}, "no \"model\"");
  EXPECT_FALSE(Tokenizer::FromJson("{\"model\": ").ok());
  EXPECT_FALSE(Tokenizer::Load("/nonexistent/tokenizer.json").ok());
}

TEST(BadInput, InvalidUtf8SaysWhere) {
  auto t = Tokenizer::Load(tokenizer_test::FixtureDir("tiny97") + "/tokenizer.json");
  ASSERT_TRUE(t.ok()) << t.status();
  auto ids = (*t)->Encode("abc\xC3(xyz");
  ASSERT_FALSE(ids.ok());
  EXPECT_EQ(ids.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ids.status().message().find("not valid UTF-8 at byte 3"), std::string::npos) << ids.status();
  EXPECT_FALSE((*t)->Encode("\xED\xA0\x80").ok());  // a surrogate
  EXPECT_FALSE((*t)->Encode("\xC0\xAF").ok());      // an overlong '/'
}

}  // namespace
}  // namespace attune
