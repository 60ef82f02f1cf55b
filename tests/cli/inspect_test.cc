// attune inspect: the text and JSON reports against what each model's
// model.json says its attention blocks are.
#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "tests/cli/cli_test_util.h"

namespace attune::cli_test {
namespace {

using nlohmann::json;

json InspectJson(const ModelCase& m, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"inspect", m.model(), "--format", "json", "--threads", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  return json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

class InspectModelTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(InspectModelTest, JsonReportHasTheContractKeys) {
  const ModelCase& m = GetParam();
  const json info = m.info();
  const json r = InspectJson(m);
  ASSERT_TRUE(r.is_object()) << m.name;
  for (const char* key : {"ops_before", "ops_after", "fusions", "rejected"}) ASSERT_TRUE(r.contains(key)) << key;
  ASSERT_TRUE(r["ops_before"].is_object());
  ASSERT_TRUE(r["ops_after"].is_object());
  for (const auto& [op, n] : r["ops_before"].items()) EXPECT_TRUE(n.is_number_integer()) << op;
  EXPECT_EQ(Count(r["ops_before"], "MultiHeadAttention"), 0);
  EXPECT_EQ(Count(r["ops_after"], "MultiHeadAttention"), static_cast<int>(r["fusions"].size()));

  for (const json& f : r["fusions"]) {
    for (const char* key : {"op", "replaced", "num_heads", "kv_num_heads", "head_dim", "scale", "causal", "window", "mask"})
      ASSERT_TRUE(f.contains(key)) << key;
    EXPECT_EQ(f["op"], "MultiHeadAttention");
    ASSERT_TRUE(f["replaced"].is_array());
    EXPECT_GE(f["replaced"].size(), 3u);
    for (const json& name : f["replaced"]) EXPECT_TRUE(name.is_string());
    EXPECT_TRUE(f["scale"].is_number());
    EXPECT_TRUE(f["causal"].is_boolean());
    const std::string full_mask = f["mask"];
    // A position bias adds "+bias" to the structural kind and names its value.
    const bool biased = absl::EndsWith(full_mask, "+bias");
    const std::string mask = biased ? full_mask.substr(0, full_mask.size() - 5) : full_mask;
    EXPECT_TRUE(mask == "causal" || mask == "window" || mask == "explicit" || mask == "none" ||
                mask == "causal+padding" || mask == "window+padding" || mask == "padding")
        << full_mask;
    if (biased) EXPECT_TRUE(mask != "explicit" && mask != "none") << full_mask;
    ASSERT_TRUE(f.contains("bias"));
    EXPECT_EQ(f["bias"].is_string(), biased) << f.dump();
    const bool padded = absl::EndsWith(mask, "padding");
    EXPECT_EQ(f["key_padding"].is_string(), padded) << f.dump();
    if (mask == "window" || mask == "window+padding") {
      EXPECT_TRUE(f["window"].is_number_integer());
    } else {
      EXPECT_TRUE(f["window"].is_null()) << f.dump();
    }
    EXPECT_EQ(f["causal"].get<bool>(), absl::StartsWith(mask, "causal") || absl::StartsWith(mask, "window"));
  }
  for (const json& c : r["rejected"]) {
    for (const char* key : {"at", "pattern", "reason"}) {
      ASSERT_TRUE(c.contains(key)) << key;
      EXPECT_TRUE(c[key].is_string());
    }
    EXPECT_FALSE(c["reason"].get<std::string>().empty());
  }

  const json& blocks = info["attention_blocks"];
  if (!info.value("negative", false)) {
    // Each block fused as model.json describes it, in graph order.
    ASSERT_EQ(static_cast<int>(r["fusions"].size()), info["expected_fusions"].get<int>()) << r["rejected"].dump(1);
    for (size_t i = 0; i < r["fusions"].size(); ++i) {
      const json& f = r["fusions"][i];
      const json& b = blocks[i];
      EXPECT_EQ(f["mask"], b["mask"]) << m.name << " block " << i;
      EXPECT_EQ(f["num_heads"], b["num_heads"]) << m.name;
      EXPECT_EQ(f["kv_num_heads"], b["kv_num_heads"]) << m.name;
      EXPECT_EQ(f["head_dim"], b["head_dim"]) << m.name;
      EXPECT_EQ(f["window"], b["window"]) << m.name;
      // 1/√D unless the block says otherwise (T5 does not scale its scores, DiT multiplies by 100).
      const double scale = b.value("scale", 1.0 / std::sqrt(b["head_dim"].get<double>()));
      EXPECT_NEAR(f["scale"].get<double>(), scale, 1e-6 * std::max(1.0, scale)) << m.name;
    }
  } else {
    // A trap: never causal; an explicit-mask fusion only where model.json allows it.
    for (const json& f : r["fusions"]) {
      EXPECT_FALSE(f["causal"].get<bool>()) << m.name;
      EXPECT_TRUE(info.value("explicit_fusion_allowed", false)) << m.name;
      EXPECT_EQ(f["mask"], "explicit") << m.name;
    }
    if (r["fusions"].empty()) EXPECT_FALSE(r["rejected"].empty()) << "a trap must say why it was not fused";
  }
}

TEST_P(InspectModelTest, NoFuseReportsNoFusion) {
  const json r = InspectJson(GetParam(), {"--no-fuse"});
  ASSERT_TRUE(r.is_object());
  EXPECT_TRUE(r["fusions"].empty());
  EXPECT_EQ(Count(r["ops_after"], "MultiHeadAttention"), 0);
  EXPECT_EQ(r["fuse"], false);
}

TEST_P(InspectModelTest, TextReportHasEverySection) {
  const ModelCase& m = GetParam();
  const CliResult r = RunCli({"inspect", m.model(), "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json j = InspectJson(m);
  EXPECT_EQ(r.out.find("\033["), std::string::npos) << "no colour when stdout is not a terminal";
  EXPECT_EQ(r.out.rfind("Model  " + m.model(), 0), 0u) << r.out;
  for (const std::string& section : std::vector<std::string>{"\nOps  (before -> after passes)\n", "\n  total ",
                                    "\nFusions (" + std::to_string(j["fusions"].size()) + ")\n",
                                    "\nRejected candidates (" + std::to_string(j["rejected"].size()) + ")\n"})
    EXPECT_NE(r.out.find(section), std::string::npos) << section << "\n" << r.out;
  for (const json& f : j["fusions"]) EXPECT_NE(r.out.find(f["node"].get<std::string>()), std::string::npos);
  for (const json& c : j["rejected"]) EXPECT_NE(r.out.find(c["reason"].get<std::string>()), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Models, InspectModelTest, ::testing::ValuesIn(AllModels()), TestName);

TEST(InspectCommand, TextReportOfMhaCausal) {
  const CliResult r = RunCli({"inspect", Model("mha_causal").model()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("Fusions (1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  MultiHeadAttention            0 -> 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("heads      4 (kv 4) x head_dim 16, scale 0.25"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mask       causal"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input        x                        float32[batch, seq, 64]"), std::string::npos) << r.out;
}

TEST(InspectCommand, WindowIsReportedInTextAndJson) {
  const CliResult r = RunCli({"inspect", Model("mha_window8").model()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("mask       window 8"), std::string::npos) << r.out;
  const json j = InspectJson(Model("mha_window8"));
  EXPECT_EQ(j["fusions"][0]["window"], 8);
  EXPECT_EQ(j["fusions"][0]["mask"], "window");
}

TEST(InspectCommand, GptFusesBothLayers) {
  const json j = InspectJson(Model("gpt_maskfill"));
  EXPECT_EQ(Count(j["ops_after"], "MultiHeadAttention"), 2);
  EXPECT_EQ(Count(j["ops_after"], "Softmax"), 0);
  EXPECT_EQ(Count(j["ops_before"], "Softmax"), 2);
}

TEST(InspectCommand, PassesListsThePipelineAndDisablePassTakesAName) {
  const CliResult passes = RunCli({"inspect", "--passes"});
  ASSERT_EQ(passes.exit_code, 0) << Describe(passes);
  const std::vector<std::string> names = Lines(passes.out);
  ASSERT_FALSE(names.empty());
  std::string fusion_pass;
  for (const std::string& n : names)
    if (n.find("attention") != std::string::npos) fusion_pass = n;
  ASSERT_FALSE(fusion_pass.empty()) << passes.out;
  const json j = InspectJson(Model("mha_causal"), {"--disable-pass", fusion_pass});
  ASSERT_TRUE(j.is_object());
  EXPECT_TRUE(j["fusions"].empty());
  EXPECT_EQ(Count(j["ops_after"], "MultiHeadAttention"), 0);
  EXPECT_TRUE(IsUsageError(RunCli({"inspect", Model("mha_causal").model(), "--disable-pass", "no_such_pass"})));
}

TEST(InspectCommand, OutputFlagWritesTheReportToAFile) {
  TempDir dir;
  const CliResult r =
      RunCli({"inspect", Model("single_head").model(), "--format", "json", "--output", dir / "report.json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.out, "");
  const json j = json::parse(ReadFile(dir / "report.json"), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["fusions"].size(), 1u);
}

TEST(InspectCommand, BadFormatIsAUsageError) {
  const CliResult r = RunCli({"inspect", Model("mha_causal").model(), "--format", "yaml"});
  EXPECT_TRUE(IsUsageError(r));
  EXPECT_NE(ErrorLine(r).find("yaml"), std::string::npos);
}

}  // namespace
}  // namespace attune::cli_test
