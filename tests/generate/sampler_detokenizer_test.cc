// The sampler's PRNG and choices, and ids back to text.
#include <cstdio>
#include <fstream>
#include <map>

#include "engine/generate/detokenizer.h"
#include "engine/generate/sampler.h"
#include "gtest/gtest.h"
#include "tests/common/paths.h"

namespace attune {
namespace {

TEST(SamplerTest, XoshiroMatchesTheReferenceAlgorithm) {
  // xoshiro256** seeded by four splitmix64 outputs from 0, computed with an
  // independent Python transcription of Vigna's reference C code.
  Xoshiro256 rng(0);
  EXPECT_EQ(rng.Next(), 0x99ec5f36cb75f2b4ull);
  EXPECT_EQ(rng.Next(), 0xbf6e1f784956452aull);
  EXPECT_EQ(rng.Next(), 0x1a5f849d4933e6e0ull);
  for (int i = 0; i < 1000; ++i) {
    const double u = rng.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(SamplerTest, GreedyTakesTheFirstMaximum) {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(ArgMax(logits), 1);
  Sampler s({true, 1.0f, 0, 1.0f}, 7);
  EXPECT_EQ(s.Next(logits), 1);
}

TEST(SamplerTest, TopKAndTopPLimitTheCandidates) {
  const std::vector<float> logits = {0.0f, 3.0f, 2.9f, -5.0f, 1.0f};
  Sampler top1({false, 1.0f, 1, 1.0f}, 3);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(top1.Next(logits), 1);
  // softmax mass: token 1 about 0.47, token 2 about 0.43; top_p 0.8 keeps exactly those two.
  Sampler nucleus({false, 1.0f, 0, 0.8f}, 11);
  std::map<int64_t, int> seen;
  for (int i = 0; i < 400; ++i) ++seen[nucleus.Next(logits)];
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_GT(seen[1], 100);
  EXPECT_GT(seen[2], 100);
  // Without limits every token with real mass appears, in proportion.
  Sampler all({false, 1.0f, 0, 1.0f}, 5);
  std::map<int64_t, int> counts;
  for (int i = 0; i < 4000; ++i) ++counts[all.Next(logits)];
  EXPECT_GT(counts[4], 150);  // p(4) about 0.064
  EXPECT_LT(counts[4], 380);
  EXPECT_LT(counts[3], 10);  // p(3) about 4e-4
}

TEST(SamplerTest, SameSeedSameDraws) {
  const std::vector<float> logits = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
  Sampler a({false, 2.0f, 0, 1.0f}, 42), b({false, 2.0f, 0, 1.0f}, 42), c({false, 2.0f, 0, 1.0f}, 43);
  std::vector<int64_t> da, db, dc;
  for (int i = 0; i < 64; ++i) {
    da.push_back(a.Next(logits));
    db.push_back(b.Next(logits));
    dc.push_back(c.Next(logits));
  }
  EXPECT_EQ(da, db);
  EXPECT_NE(da, dc);
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = testing::BinaryDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(DetokenizerTest, Gpt2ByteLevelVocabJson) {
  // Ġ (U+0120) is the space byte, Ċ (U+010A) the newline; "Ã©" are the two bytes of "é".
  const std::string path = WriteTemp("generate_test_vocab.json",
                                     R"({"Hello": 0, "\u0120world": 1, "\u010a": 2, "caf": 3, "\u00c3\u00a9": 4,
                                         "!": 5})");
  auto d = Detokenizer::Load(path);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->mode(), Detokenizer::Mode::kByteLevel);
  const std::vector<int64_t> ids = {0, 1, 5, 2, 3, 4};
  EXPECT_EQ(d->Decode(ids), "Hello world!\ncaf\xC3\xA9");
  EXPECT_EQ(d->TokenBytes(99), "<99?>");
}

TEST(DetokenizerTest, TokenizerJsonByteLevelWithAddedTokens) {
  const std::string path = WriteTemp("generate_test_tokenizer.json", R"({
    "added_tokens": [{"id": 3, "content": "<|endoftext|>", "special": true}],
    "decoder": {"type": "ByteLevel", "add_prefix_space": false},
    "model": {"type": "BPE", "vocab": {"a": 0, "\u0120b": 1, "\u0120\u0120": 2}, "merges": []}})");
  auto d = Detokenizer::Load(path);
  ASSERT_TRUE(d.ok()) << d.status();
  const std::vector<int64_t> ids = {0, 1, 2, 3};
  EXPECT_EQ(d->Decode(ids), "a b  <|endoftext|>");
}

TEST(DetokenizerTest, SentencePieceMetaspaceAndByteFallback) {
  const std::string path = WriteTemp("generate_test_spm.json", R"({
    "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                                                 {"type": "ByteFallback"}, {"type": "Fuse"}]},
    "model": {"type": "BPE", "vocab": {"<unk>": 0, "\u2581The": 1, "\u2581cat": 2, "<0x0A>": 3}}})");
  auto d = Detokenizer::Load(path);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->mode(), Detokenizer::Mode::kMetaspace);
  const std::vector<int64_t> ids = {1, 2, 3};
  EXPECT_EQ(d->Decode(ids), " The cat\n");
}

TEST(DetokenizerTest, BadFilesAreErrors) {
  EXPECT_FALSE(Detokenizer::Load("/nonexistent/vocab.json").ok());
  EXPECT_FALSE(Detokenizer::Load(WriteTemp("generate_test_bad.json", "[1, 2")).ok());
  EXPECT_FALSE(Detokenizer::Load(WriteTemp("generate_test_empty.json", "{}")).ok());
}

}  // namespace
}  // namespace attune
