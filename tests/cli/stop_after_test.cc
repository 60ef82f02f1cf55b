// attune inspect --stop-after PASS: the graph as the pipeline left it after
// the first run of PASS, in every format; an unknown name is a usage error.
#include "tests/cli/cli_test_util.h"

namespace attune::cli_test {
namespace {

using nlohmann::json;

CliResult InspectStopped(const std::string& pass, const std::string& format) {
  return RunCli({"inspect", Model("mha_causal").model(), "--format", format, "--threads", "1", "--stop-after", pass});
}

json StoppedJson(const std::string& pass) {
  const CliResult r = InspectStopped(pass, "json");
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  return json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

int CountNodes(const json& graph, const std::string& op) {
  int n = 0;
  for (const json& node : graph) n += node["op"] == op;
  return n;
}

// dead_code is the last pass before attention_fusion: the attention is still unfused there.
TEST(InspectStopAfter, BeforeTheFusionTheAttentionIsUnfused) {
  const json j = StoppedJson("dead_code");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["stopped_after"], "dead_code");
  EXPECT_EQ(j["passes"].back(), "dead_code");
  for (const json& p : j["passes"]) EXPECT_NE(p, "attention_fusion");
  EXPECT_TRUE(j["fusions"].empty());
  EXPECT_EQ(Count(j["ops_after"], "MultiHeadAttention"), 0);
  EXPECT_EQ(Count(j["ops_after"], "Softmax"), 1);
  ASSERT_TRUE(j["graph"].is_array());
  EXPECT_EQ(CountNodes(j["graph"], "Softmax"), 1);
  EXPECT_EQ(CountNodes(j["graph"], "MultiHeadAttention"), 0);
  int nodes = 0;
  for (const auto& [op, n] : j["ops_after"].items()) nodes += n.get<int>();
  EXPECT_EQ(static_cast<int>(j["graph"].size()), nodes);
}

TEST(InspectStopAfter, AfterTheFusionTheAttentionIsFused) {
  const json j = StoppedJson("attention_fusion");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["stopped_after"], "attention_fusion");
  EXPECT_EQ(j["fusions"].size(), 1u);
  EXPECT_EQ(Count(j["ops_after"], "MultiHeadAttention"), 1);
  EXPECT_EQ(Count(j["ops_after"], "Softmax"), 0);
  EXPECT_EQ(CountNodes(j["graph"], "MultiHeadAttention"), 1);
  // transposed_matmul runs after the fusion stage: not reached.
  for (const json& p : j["passes"]) EXPECT_NE(p, "transposed_matmul");
}

TEST(InspectStopAfter, TextAndDotShowTheGraphAtThatPoint) {
  const CliResult before = InspectStopped("dead_code", "text");
  ASSERT_EQ(before.exit_code, 0) << Describe(before);
  EXPECT_NE(before.out.find("Stopped after the first run of pass dead_code"), std::string::npos) << before.out;
  EXPECT_NE(before.out.find("Graph after dead_code ("), std::string::npos) << before.out;
  EXPECT_NE(before.out.find(": Softmax("), std::string::npos) << before.out;
  const CliResult after = InspectStopped("attention_fusion", "text");
  ASSERT_EQ(after.exit_code, 0) << Describe(after);
  EXPECT_NE(after.out.find(": attune.MultiHeadAttention("), std::string::npos) << after.out;
  EXPECT_EQ(after.out.find(": Softmax("), std::string::npos) << after.out;

  const CliResult dot_before = InspectStopped("dead_code", "dot");
  ASSERT_EQ(dot_before.exit_code, 0) << Describe(dot_before);
  EXPECT_NE(dot_before.out.find("after dead_code"), std::string::npos);
  EXPECT_EQ(dot_before.out.find("MultiHeadAttention"), std::string::npos);
  const CliResult dot_after = InspectStopped("attention_fusion", "dot");
  ASSERT_EQ(dot_after.exit_code, 0) << Describe(dot_after);
  EXPECT_NE(dot_after.out.find("MultiHeadAttention"), std::string::npos);
}

TEST(InspectStopAfter, WithoutItThePipelineRunsToTheEnd) {
  const CliResult r = RunCli({"inspect", Model("mha_causal").model(), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json j = json::parse(r.out);
  EXPECT_TRUE(j["stopped_after"].is_null());
  EXPECT_FALSE(j.contains("graph"));
  EXPECT_EQ(j["iteration_cap_hit"], json::array());
}

TEST(InspectStopAfter, AnUnknownPassIsAUsageErrorListingTheNames) {
  const CliResult r = InspectStopped("no_such_pass", "text");
  EXPECT_TRUE(IsUsageError(r));
  const std::string error = ErrorLine(r);
  EXPECT_NE(error.find("'no_such_pass'"), std::string::npos) << error;
  for (const char* name : {"constant_folding", "shape_inference", "dead_code", "attention_fusion"})
    EXPECT_NE(error.find(name), std::string::npos) << name << ": " << error;
  EXPECT_EQ(r.out, "");
  // A pass that is disabled, or not in the pipeline with --no-fuse, is never reached.
  EXPECT_TRUE(IsUsageError(RunCli(
      {"inspect", Model("mha_causal").model(), "--stop-after", "cse", "--disable-pass", "cse"})));
  EXPECT_TRUE(IsUsageError(RunCli(
      {"inspect", Model("mha_causal").model(), "--stop-after", "attention_fusion", "--no-fuse"})));
  EXPECT_TRUE(IsUsageError(RunCli({"inspect", Model("mha_causal").model(), "--stop-after="})));
}

}  // namespace
}  // namespace attune::cli_test
