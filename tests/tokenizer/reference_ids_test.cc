// Ids equal to the reference tokenizers' on the corpus (gen/corpus.json), for
// every family: encoding with and without the special tokens, decoding, and
// streamed decoding.
#include <unistd.h>

#include "attune/tokenizer.h"
#include "gtest/gtest.h"
#include "tests/tokenizer/fixtures.h"

namespace attune {
namespace {

using tokenizer_test::FixtureDir;
using tokenizer_test::FixtureTokenizerJson;
using tokenizer_test::ReadJson;

class ReferenceIds : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string path = FixtureTokenizerJson(GetParam());
    ASSERT_FALSE(path.empty()) << "cannot read the " << GetParam() << " fixture";
    auto loaded = Tokenizer::Load(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    tokenizer_ = *std::move(loaded);
    expected_ = ReadJson(FixtureDir(GetParam()) + "/expected.json");
    ASSERT_TRUE(expected_.is_object() && expected_["cases"].size() > 20);
  }
  std::unique_ptr<Tokenizer> tokenizer_;
  nlohmann::json expected_;
};

TEST_P(ReferenceIds, EncodeEqualsReference) {
  for (const auto& c : expected_["cases"]) {
    const std::string text = c["text"];
    auto ids = tokenizer_->Encode(text);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, c["ids"].get<std::vector<int64_t>>()) << "text: " << text;
    auto plain = tokenizer_->Encode(text, /*add_special_tokens=*/false);
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_EQ(*plain, c["ids_no_special"].get<std::vector<int64_t>>()) << "text: " << text;
  }
}

TEST_P(ReferenceIds, DecodeEqualsReference) {
  for (const auto& c : expected_["cases"]) {
    auto text = tokenizer_->Decode(c["ids_no_special"].get<std::vector<int64_t>>());
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_EQ(*text, c["decoded"].get<std::string>()) << "text: " << c["text"];
  }
}

// Streamed pieces are whole UTF-8 characters and add up to the whole decode.
TEST_P(ReferenceIds, StreamedTextEqualsDecode) {
  for (const auto& c : expected_["cases"]) {
    const auto ids = c["ids_no_special"].get<std::vector<int64_t>>();
    TextStream stream(*tokenizer_);
    std::string streamed;
    for (int64_t id : ids) {
      auto piece = stream.Push(id);
      ASSERT_TRUE(piece.ok()) << piece.status();
      EXPECT_EQ(piece->find("\xEF\xBF\xBD"), std::string::npos) << "a character was cut in " << c["text"];
      streamed += *piece;
    }
    streamed += stream.Finish();
    auto whole = tokenizer_->Decode(ids, /*skip_special_tokens=*/true);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(streamed, *whole) << "text: " << c["text"];
  }
}

TEST_P(ReferenceIds, IdsOutsideTheVocabularyAreErrors) {
  auto text = tokenizer_->Decode({1, tokenizer_->vocab_size()});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(text.status().message().find("outside the tokenizer's vocabulary"), std::string::npos);
  EXPECT_FALSE(tokenizer_->Decode({-1}).ok());
}

INSTANTIATE_TEST_SUITE_P(Families, ReferenceIds,
                         ::testing::Values("gpt2", "llama2", "llama3", "qwen3", "gemma3", "unigram", "t5"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace attune
