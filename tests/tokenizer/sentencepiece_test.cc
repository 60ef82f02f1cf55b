// SentencePiece: tokenizer.model files read natively give SentencePiece's own
// ids and decoded text (fixtures/*/spm_ids.json, written by python3-sentencepiece),
// and the precompiled charsmap (tokenizer.json's Precompiled normalizer and the
// .model's normalizer_spec) refuses a hostile blob with one error.
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "attune/tokenizer.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/tokenizer/fixtures.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/precompiled_charsmap.h"

namespace attune {
namespace {

using tokenizer_test::FixtureDir;
using tokenizer_test::ReadJson;

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class SentencePieceIds : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto loaded = Tokenizer::Load(FixtureDir(GetParam()) + "/tokenizer.model");
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    tokenizer_ = *std::move(loaded);
    cases_ = ReadJson(FixtureDir(GetParam()) + "/spm_ids.json");
    ASSERT_TRUE(cases_.is_array() && cases_.size() > 20);
  }
  std::unique_ptr<Tokenizer> tokenizer_;
  nlohmann::json cases_;
};

TEST_P(SentencePieceIds, EncodeEqualsSentencePiece) {
  const auto bos = tokenizer_->TokenToId("<s>");
  for (const auto& c : cases_) {
    const std::string text = c["text"];
    const auto expected = c["ids"].get<std::vector<int64_t>>();
    auto ids = tokenizer_->Encode(text, /*add_special_tokens=*/false);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, expected) << "text: " << text;
    auto with_bos = tokenizer_->Encode(text);
    ASSERT_TRUE(with_bos.ok());
    if (bos) EXPECT_EQ(with_bos->front(), *bos);
    EXPECT_EQ(with_bos->size(), expected.size() + (bos ? 1 : 0));
  }
}

TEST_P(SentencePieceIds, DecodeEqualsSentencePiece) {
  for (const auto& c : cases_) {
    auto text = tokenizer_->Decode(c["ids"].get<std::vector<int64_t>>());
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_EQ(*text, c["decoded"].get<std::string>()) << "text: " << c["text"];
  }
}

TEST_P(SentencePieceIds, StreamedTextEqualsDecode) {
  for (const auto& c : cases_) {
    const auto ids = c["ids"].get<std::vector<int64_t>>();
    TextStream stream(*tokenizer_);
    std::string streamed;
    for (int64_t id : ids) {
      auto piece = stream.Push(id);
      ASSERT_TRUE(piece.ok()) << piece.status();
      streamed += *piece;
    }
    streamed += stream.Finish();
    EXPECT_EQ(streamed, *tokenizer_->Decode(ids, /*skip_special_tokens=*/true)) << "text: " << c["text"];
  }
}

TEST_P(SentencePieceIds, EosFromTheModelAndIdsOutsideAreErrors) {
  ASSERT_EQ(tokenizer_->eos_ids().size(), 1u);
  EXPECT_EQ(tokenizer_->eos_ids()[0], *tokenizer_->TokenToId("</s>"));
  EXPECT_TRUE(tokenizer_->IsSpecial(tokenizer_->eos_ids()[0]));
  auto text = tokenizer_->Decode({1, tokenizer_->vocab_size()});
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("outside the tokenizer's vocabulary"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Models, SentencePieceIds, ::testing::Values("unigram", "t5", "spm_bpe"),
                         [](const auto& info) { return info.param; });

// The BPE fixture falls back to bytes for a character it lacks, and they decode back.
TEST(SentencePieceModel, ByteFallbackRoundTrips) {
  auto t = Tokenizer::Load(FixtureDir("spm_bpe") + "/tokenizer.model");
  ASSERT_TRUE(t.ok()) << t.status();
  const std::string text = "x \xF0\x9F\x9C\x8F y";  // U+1F70F, not a piece
  auto ids = (*t)->Encode(text, false);
  ASSERT_TRUE(ids.ok());
  EXPECT_NE(std::find(ids->begin(), ids->end(), *(*t)->TokenToId("<0xF0>")), ids->end());
  EXPECT_EQ(*(*t)->Decode(*ids), text);
}

// Every cut of a real model and single-byte changes of it either load or give one error.
TEST(SentencePieceModel, DamagedFilesAreErrors) {
  const std::string model = ReadBytes(FixtureDir("t5") + "/tokenizer.model");
  ASSERT_GT(model.size(), 1000u);
  const std::string dir = ::testing::TempDir();
  int refused = 0;
  for (size_t cut : {size_t{0}, size_t{1}, size_t{5}, model.size() / 3, model.size() - 7}) {
    const std::string path = dir + "/cut.model";
    std::ofstream(path, std::ios::binary) << model.substr(0, cut);
    auto t = Tokenizer::Load(path);
    if (!t.ok()) {
      ++refused;
      EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
      EXPECT_EQ(t.status().message().find('\n'), std::string::npos);
    } else {
      EXPECT_TRUE((*t)->Encode("Hello ＡＢＣ").ok());
    }
  }
  EXPECT_GE(refused, 3);
}

std::string Blob(std::vector<uint32_t> units, std::string replacements, uint32_t trie_bytes) {
  std::string blob(4, '\0');
  std::memcpy(blob.data(), &trie_bytes, 4);
  for (uint32_t u : units) blob.append(reinterpret_cast<const char*>(&u), 4);
  return blob + replacements;
}

// A one-rule trie: "a" -> replacement at `value`. Unit 0 is the root (offset 1),
// unit 1^'a' holds label 'a' with a leaf whose value unit sits at its offset.
std::vector<uint32_t> OneRule(uint32_t value) {
  std::vector<uint32_t> units(256, 0);
  units[0] = 1u << 10;                          // root: children at 1 ^ label
  const uint32_t a = 1 ^ 'a';
  units[a] = 'a' | (1u << 8) | ((a ^ 200) << 10);  // label 'a', has a leaf, children at a ^ offset
  units[200] = value | (1u << 31);              // the leaf: the replacement's offset
  return units;
}

TEST(PrecompiledCharsMap, FindsTheRuleAndChecksEveryRead) {
  auto map = tok::PrecompiledCharsMap::FromBlob(Blob(OneRule(0), std::string("bc\0", 3), 1024));
  ASSERT_TRUE(map.ok()) << map.status();
  auto match = map->Find("ax", /*longest=*/true);
  ASSERT_TRUE(match.ok());
  EXPECT_EQ(match->length, 1u);
  EXPECT_EQ(match->replacement, "bc");
  EXPECT_EQ(map->Find("x", true)->length, 0u);

  auto outside = tok::PrecompiledCharsMap::FromBlob(Blob(OneRule(99), std::string("bc\0", 3), 1024));
  ASSERT_TRUE(outside.ok());
  EXPECT_FALSE(outside->Find("a", true).ok());  // a value past the replacements
  auto inside_char = tok::PrecompiledCharsMap::FromBlob(Blob(OneRule(1), "\xC3\xA9", 1024));
  ASSERT_TRUE(inside_char.ok());
  EXPECT_FALSE(inside_char->Find("a", true).ok());  // a value inside a character

  EXPECT_FALSE(tok::PrecompiledCharsMap::FromBlob("ab").ok());
  EXPECT_FALSE(tok::PrecompiledCharsMap::FromBlob(Blob({1, 2}, "", 4096)).ok());  // trie past the end
  EXPECT_FALSE(tok::PrecompiledCharsMap::FromBlob(Blob({1, 2}, "", 6)).ok());     // not whole units
  EXPECT_FALSE(tok::PrecompiledCharsMap::FromBlob(Blob({1}, "\xFF", 4)).ok());    // replacements not UTF-8
  // A trie whose offsets point past its units finds nothing and reads nothing outside.
  auto wild = tok::PrecompiledCharsMap::FromBlob(Blob({0xFFFFFC00u}, "", 4));
  ASSERT_TRUE(wild.ok());
  EXPECT_EQ(wild->Find("abc", true)->length, 0u);
}

TEST(PrecompiledCharsMap, NormalizerFromTokenizerJson) {
  const std::string blob = Blob(OneRule(0), std::string("bc\0", 3), 1024);
  auto n = tok::MakeNormalizer({{"type", "Precompiled"}, {"precompiled_charsmap", absl::Base64Escape(blob)}});
  ASSERT_TRUE(n.ok()) << n.status();
  std::string text = "xay a";
  ASSERT_TRUE((*n)->Normalize(text).ok());
  EXPECT_EQ(text, "xbcy bc");
  auto bad = tok::MakeNormalizer({{"type", "Precompiled"}, {"precompiled_charsmap", "%%%"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("base64"), std::string::npos);
}

// The real T5-style charsmap (SentencePiece's nmt_nfkc) on text it rewrites.
TEST(PrecompiledCharsMap, NmtNfkcRewrites) {
  const std::string path = tokenizer_test::FixtureTokenizerJson("t5");
  const nlohmann::json j = ReadJson(path);
  auto n = tok::MakeNormalizer(j["normalizer"]);
  ASSERT_TRUE(n.ok()) << n.status();
  std::string text = "\xEF\xBC\xA1\xEF\xBC\xA2 \xEF\xAC\x81 \xE2\x91\xA0 a\xC2\xA0" "b";  // ＡＢ ﬁ ① a NBSP b
  ASSERT_TRUE((*n)->Normalize(text).ok());
  EXPECT_EQ(text, "AB fi 1 a b");
}

}  // namespace
}  // namespace attune
