// attune tokenize, and attune generate --prompt against the id-based path.
#include "tests/cli/cli_test_util.h"

namespace attune::cli_test {
namespace {

using nlohmann::json;

std::string Tiny() { return attune::testing::SourceDir() + "/tests/tokenizer/fixtures/tiny97/tokenizer.json"; }
std::string DecodeModel() { return attune::testing::SourceDir() + "/models/hf_gpt2_decode/model.onnx"; }

TEST(TokenizeCli, EncodesAndDecodes) {
  const CliResult r = RunCli({"tokenize", "--tokenizer", Tiny(), "--text", "Hi you"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.out, "39 72 94 88 78 84\n");  // 'H' 'i' 'Ġ' 'y' 'o' 'u'
  const CliResult j = RunCli({"tokenize", "--tokenizer", Tiny(), "--text", "Hi<|endoftext|>", "--json"});
  ASSERT_EQ(j.exit_code, 0) << Describe(j);
  EXPECT_EQ(json::parse(j.out)["ids"], json({39, 72, 96}));
  const CliResult d = RunCli({"tokenize", "--tokenizer", Tiny(), "--decode", "39,72,94,88,78,84"});
  ASSERT_EQ(d.exit_code, 0) << Describe(d);
  EXPECT_EQ(d.out, "Hi you\n");
}

TEST(TokenizeCli, BadInputIsOneLineAndExit2) {
  TempDir dir;
  WriteFile(dir / "bad.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, \"normalizer\": {\"type\": \"Klingon\"}}");
  WriteFile(dir / "text.txt", "ok \xFF bad");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"tokenize", "--tokenizer", dir / "bad.json", "--text", "x"}, "unsupported normalizer type \"Klingon\""},
      {{"tokenize", "--tokenizer", Tiny(), "--file", dir / "text.txt"}, "not valid UTF-8 at byte 3"},
      {{"tokenize", "--tokenizer", Tiny(), "--decode", "1,97"}, "token id 97 is outside the tokenizer's vocabulary"},
      {{"tokenize", "--tokenizer", Tiny(), "--decode", "1,x"}, "is not a token id"},
      {{"tokenize", "--tokenizer", dir / "missing.json", "--text", "x"}, "cannot open"},
      {{"tokenize", "--tokenizer", Tiny()}, "exactly one of --text, --file and --decode"},
  };
  for (const auto& [args, words] : cases) {
    const CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_EQ(Lines(r.err).size(), 1u) << Describe(r);
    EXPECT_NE(r.err.find(words), std::string::npos) << Describe(r);
  }
}

// The same ids from text as from the ids the tokenizer gives for it; the text is their decode.
TEST(GenerateCli, PromptTextEqualsPromptIds) {
  const CliResult enc = RunCli({"tokenize", "--tokenizer", Tiny(), "--text", "Hello, world", "--json"});
  ASSERT_EQ(enc.exit_code, 0) << Describe(enc);
  std::string ids;
  const json encoded = json::parse(enc.out);  // kept: a range-for over parse(...)["ids"] reads a dead temporary
  for (const auto& id : encoded["ids"]) ids += (ids.empty() ? "" : ",") + std::to_string(id.get<int64_t>());
  const CliResult by_ids = RunCli({"generate", DecodeModel(), "--prompt-ids", ids, "--max-new-tokens", "12", "--eos-id",
                                   "96", "--tokenizer", Tiny(), "--json", "--threads", "1"});
  ASSERT_EQ(by_ids.exit_code, 0) << Describe(by_ids);
  const CliResult by_text = RunCli({"generate", DecodeModel(), "--prompt", "Hello, world", "--max-new-tokens", "12",
                                    "--tokenizer", Tiny(), "--json", "--threads", "1"});
  ASSERT_EQ(by_text.exit_code, 0) << Describe(by_text);
  const json a = json::parse(by_ids.out), b = json::parse(by_text.out);
  EXPECT_EQ(a["generated_ids"], b["generated_ids"]);
  EXPECT_EQ(a["text"], b["text"]);
  EXPECT_EQ(b["prompt_ids"][0].dump(), "[" + ids + "]");
  // A batch of two prompts of different lengths, left-padded: the first row as alone.
  const CliResult batch = RunCli({"generate", DecodeModel(), "--prompt", "Hello, world", "--prompt", "Hi", "--max-new-tokens",
                                  "12", "--tokenizer", Tiny(), "--json", "--threads", "1"});
  ASSERT_EQ(batch.exit_code, 0) << Describe(batch);
  EXPECT_EQ(json::parse(batch.out)["generated_ids"][0], b["generated_ids"][0]);
}

TEST(GenerateCli, StopStringCutsTheText) {
  const CliResult all = RunCli({"generate", DecodeModel(), "--prompt", "Hello", "--max-new-tokens", "16", "--tokenizer",
                                Tiny(), "--json", "--threads", "1"});
  ASSERT_EQ(all.exit_code, 0) << Describe(all);
  const std::string text = json::parse(all.out)["text"][0];
  ASSERT_GE(text.size(), 4u);
  const std::string stop = text.substr(2, 2);
  const CliResult cut = RunCli({"generate", DecodeModel(), "--prompt", "Hello", "--max-new-tokens", "16", "--tokenizer",
                                Tiny(), "--stop", stop, "--json", "--threads", "1"});
  ASSERT_EQ(cut.exit_code, 0) << Describe(cut);
  EXPECT_EQ(json::parse(cut.out)["text"][0], text.substr(0, text.find(stop)));
}

TEST(GenerateCli, TokenizerErrors) {
  const std::string unigram_model = attune::testing::SourceDir() + "/tests/tokenizer/fixtures/unigram/tokenizer.json";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      // The Unigram fixture's 600 ids do not fit the model's 97.
      {{"generate", DecodeModel(), "--prompt", "Hi", "--tokenizer", unigram_model}, "does not match the model's logits width (97)"},
      {{"generate", DecodeModel(), "--prompt", "Hi"}, "no tokenizer.json or tokenizer.model beside"},
      {{"generate", DecodeModel(), "--prompt", "Hi", "--prompt-ids", "1", "--tokenizer", Tiny()}, "not both"},
      {{"generate", DecodeModel(), "--prompt", "a\xC3", "--tokenizer", Tiny()}, "prompt 1: the text is not valid UTF-8 at byte 1"},
  };
  for (const auto& [args, words] : cases) {
    const CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_EQ(Lines(r.err).size(), 1u) << Describe(r);
    EXPECT_NE(r.err.find(words), std::string::npos) << Describe(r);
  }
}

}  // namespace
}  // namespace attune::cli_test
