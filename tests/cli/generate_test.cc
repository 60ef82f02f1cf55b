// attune generate: the JSON contract against PyTorch's stored greedy ids, the
// text output with --vocab, the refusals (exit 2, one line), and the pairing
// attune inspect shows.
#include "tests/cli/cli_test_util.h"

namespace attune::cli_test {
namespace {

using nlohmann::json;

std::string Model(const std::string& name) { return attune::testing::SourceDir() + "/models/" + name + "/model.onnx"; }

json LastLineJson(const CliResult& r) {
  const std::vector<std::string> lines = Lines(r.out);
  if (lines.empty()) return json();
  return json::parse(lines.back(), nullptr, /*allow_exceptions=*/false);
}

std::string IdList(const std::vector<int64_t>& ids) {
  std::string s;
  for (int64_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

TEST(GenerateCliTest, JsonMatchesPyTorchGreedyIds) {
  for (const std::string name : {"gpt_kvcache", "hf_gpt2_pos_decode"}) {
    const json ref =
        json::parse(ReadFile(attune::testing::SourceDir() + "/models/" + name + "/generate_reference.json"));
    for (const json& c : ref["cases"]) {
      std::vector<std::string> args = {
          "generate",  Model(name), "--max-new-tokens", std::to_string(ref["max_new_tokens"].get<int>()), "--json",
          "--threads", "1"};
      for (const auto& p : c["prompts"]) {
        args.push_back("--prompt-ids");
        args.push_back(IdList(p.get<std::vector<int64_t>>()));
      }
      for (bool inplace : {true, false}) {
        if (!inplace) args.push_back("--no-inplace-cache");
        const CliResult r = RunCli(args);
        ASSERT_EQ(r.exit_code, 0) << Describe(r);
        const json out = LastLineJson(r);
        ASSERT_TRUE(out.is_object()) << Describe(r);
        EXPECT_EQ(out["generated_ids"], c["generated_ids"]) << name;
        for (const char* key : {"prefill_ms", "token_ms_median", "token_ms_p90", "tokens_per_s"})
          EXPECT_TRUE(out[key].is_number()) << key;
        EXPECT_EQ(out["cache"], inplace ? "append" : "copy");
      }
    }
  }
}

// Without fusion the cache falls back to two buffers in turn: the JSON says
// so, a note on stderr says why, --show-convention shows each tensor's path,
// and the tokens are PyTorch's.
TEST(GenerateCliTest, UnfusedModelReportsThePingPongCache) {
  const json ref =
      json::parse(ReadFile(attune::testing::SourceDir() + "/models/hf_gpt2_decode/generate_reference.json"));
  const json& c = ref["cases"][0];
  const std::vector<std::string> common = {
      "generate", Model("hf_gpt2_decode"), "--prompt-ids", IdList(c["prompts"][0].get<std::vector<int64_t>>()),
      "--max-new-tokens", std::to_string(ref["max_new_tokens"].get<int>()), "--threads", "1"};
  std::vector<std::string> args = common;
  for (const char* a : {"--no-fuse", "--json"}) args.push_back(a);
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json out = LastLineJson(r);
  EXPECT_EQ(out["cache"], "ping-pong");
  EXPECT_EQ(out["generated_ids"], c["generated_ids"]);
  EXPECT_NE(r.err.find("note: 4 of 4 cache tensors are kept in two buffers in turn"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot be read in place"), std::string::npos) << r.err;

  args = common;
  args.push_back("--show-convention");
  const CliResult fused = RunCli(args);
  ASSERT_EQ(fused.exit_code, 0) << Describe(fused);
  EXPECT_NE(fused.out.find("cache path      past_key_values.1.value: appended in place"), std::string::npos)
      << fused.out;
  EXPECT_EQ(fused.err.find("note:"), std::string::npos) << fused.err;
  EXPECT_NE(fused.out.find("append cache)"), std::string::npos) << fused.out;
  args.push_back("--no-fuse");
  const CliResult unfused = RunCli(args);
  ASSERT_EQ(unfused.exit_code, 0) << Describe(unfused);
  EXPECT_NE(unfused.out.find("cache path      past_key_values.0.key: ping-pong (past"), std::string::npos)
      << unfused.out;
}

TEST(GenerateCliTest, PrefillAndDecodeModels) {
  const CliResult r =
      RunCli({"generate", Model("hf_gpt2_pos_prefill"), "--decode-model", Model("hf_gpt2_pos_decode"), "--prompt-ids",
              "47,68,25", "--max-new-tokens", "20", "--json", "--threads", "1", "--warmup", "1"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json ref =
      json::parse(ReadFile(attune::testing::SourceDir() + "/models/hf_gpt2_pos_decode/generate_reference.json"));
  EXPECT_EQ(LastLineJson(r)["generated_ids"], ref["cases"][0]["generated_ids"]);
}

TEST(GenerateCliTest, TextSummaryAndVocab) {
  // A byte-level vocabulary of the 97 ids: id i < 95 is the character ' ' + i ('Ġ' for the space).
  attune::testing::TempDir dir;
  json vocab = json::object();
  for (int i = 0; i < 95; ++i) vocab[i == 0 ? std::string("\u0120") : std::string(1, static_cast<char>(' ' + i))] = i;
  vocab["\u00a1"] = 95;  // bytes 0xA1, 0xA2 as GPT-2 writes them
  vocab["\u00a2"] = 96;
  const std::string vocab_path = dir / "vocab.json";
  WriteFile(vocab_path, vocab.dump());
  const CliResult r = RunCli({"generate", Model("gpt_kvcache"), "--prompt-ids", "47,68,25", "--max-new-tokens", "5",
                              "--vocab", vocab_path, "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  // The stored greedy run starts 51 88 54 41 94: "SxVI~".
  EXPECT_NE(r.out.find("ids 1      51 88 54 41 94"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("text 1     Sx"
                       "VI~"),
            std::string::npos)
      << r.out;
  for (const char* key : {"prefill ", "per token  median", "p90", "tokens/s "})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << "\n" << r.out;
  const CliResult j = RunCli({"generate", Model("gpt_kvcache"), "--prompt-ids", "47,68,25", "--max-new-tokens", "5",
                              "--vocab", vocab_path, "--json", "--threads", "1"});
  EXPECT_EQ(LastLineJson(j)["text"][0],
            "Sx"
            "VI~")
      << Describe(j);
}

TEST(GenerateCliTest, SamplingIsReproducible) {
  const std::vector<std::string> args = {"generate",
                                         Model("gpt_kvcache"),
                                         "--prompt-ids",
                                         "1,2,3",
                                         "--temperature",
                                         "1.3",
                                         "--top-k",
                                         "20",
                                         "--top-p",
                                         "0.9",
                                         "--seed",
                                         "77",
                                         "--json",
                                         "--threads",
                                         "1",
                                         "--max-new-tokens",
                                         "16"};
  const CliResult a = RunCli(args), b = RunCli(args);
  ASSERT_EQ(a.exit_code, 0) << Describe(a);
  EXPECT_EQ(LastLineJson(a)["generated_ids"], LastLineJson(b)["generated_ids"]);
  std::vector<std::string> other = args;
  other[11] = "78";
  EXPECT_NE(LastLineJson(a)["generated_ids"], LastLineJson(RunCli(other))["generated_ids"]);
}

TEST(GenerateCliTest, Refusals) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"generate", Model("mha_causal"), "--prompt-ids", "1,2"}, "not a decoder"},
      {{"generate", Model("gpt_maskfill"), "--prompt-ids", "1,2"}, "no past/present"},
      {{"generate", Model("hf_gpt2_prefill"), "--prompt-ids", "1,2"}, "--decode-model"},
      {{"generate", Model("hf_t5_decoder_with_past"), "--prompt-ids", "1,2"}, "an encoder-decoder model"},
      {{"generate", Model("gpt_kvcache"), "--prompt-ids", "1,97"}, "outside the vocabulary"},
      {{"generate", Model("gpt_kvcache"), "--prompt-ids", "1,x"}, "not a token id"},
      {{"generate", Model("gpt_kvcache")}, "--prompt-ids"},
      {{"generate", Model("gpt_kvcache"), "--prompt-ids", IdList(std::vector<int64_t>(70, 3))},
       "longer than the model's context"},
      {{"generate", Model("gpt_kvcache"), "--prompt-ids", "1,2", "--prompt-ids", "3"}, "attention_mask"},
      {{"generate", Model("gpt_kvcache"), "--prompt-ids", "1", "--greedy", "--top-k", "3"}, "--greedy"},
      {{"generate", Model("gpt_kvcache"), "--prompt-ids", "1", "--map", "past_key_9=present_key_0"}, "no input"},
  };
  for (const Case& c : cases) {
    const CliResult r = RunCli(c.args);
    EXPECT_TRUE(IsUsageError(r)) << c.message;
    EXPECT_NE(ErrorLine(r).find(c.message), std::string::npos) << ErrorLine(r);
  }
  // A cache above --max-tensor-mb: 40 prompts x 4 heads x 63 positions x 32 floats is 1.2 MiB per tensor.
  std::vector<std::string> big = {"generate", Model("gpt_kvcache"), "--max-tensor-mb", "1", "--max-new-tokens", "60"};
  for (int i = 0; i < 40; ++i) {
    big.push_back("--prompt-ids");
    big.push_back("5,6,7,8");
  }
  const CliResult r = RunCli(big);
  EXPECT_TRUE(IsUsageError(r));
  EXPECT_NE(ErrorLine(r).find("KV cache tensor"), std::string::npos) << ErrorLine(r);
  EXPECT_NE(ErrorLine(r).find("--max-tensor-mb"), std::string::npos) << ErrorLine(r);
}

TEST(GenerateCliTest, HelpSaysPromptsAreTextOrIds) {
  const CliResult r = RunCli({"generate", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("A --prompt is text, encoded with the model's"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--prompt-ids ID,ID,..."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--no-inplace-cache"), std::string::npos);
}

TEST(GenerateCliTest, InspectShowsThePairing) {
  const CliResult r = RunCli({"inspect", Model("hf_gpt2_pos_decode"), "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("past_key_values.1.value -> present.1.value"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("position_ids    position_ids"), std::string::npos) << r.out;
  const CliResult j = RunCli({"inspect", Model("gpt_kvcache"), "--format", "json", "--threads", "1"});
  const json report = json::parse(j.out, nullptr, false);
  ASSERT_TRUE(report.contains("decoder")) << j.out.substr(0, 500);
  EXPECT_EQ(report["decoder"]["cache"].size(), 4u);
  EXPECT_EQ(report["decoder"]["cache"][3]["present"], "present_value_1");
  EXPECT_EQ(report["decoder"]["context"], 64);
  const CliResult none = RunCli({"inspect", Model("mha_causal"), "--threads", "1"});
  EXPECT_EQ(none.out.find("decoder convention"), std::string::npos);
}

}  // namespace
}  // namespace attune::cli_test
