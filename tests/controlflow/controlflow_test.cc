// If, Loop and Scan with subgraphs (models written by gen_models.py beside
// this file) against ONNX Runtime's outputs on the same files and inputs,
// fused and unfused, on 1 and 2 threads: outer-scope reads two levels down,
// branches of different shapes, loop-carried values with scan outputs and an
// early exit, Scan on non-zero axes in both directions. Then the limits and
// the hostile models: one error line, exit 2, from the CLI.
#include <filesystem>
#include <string>
#include <vector>

#include "attune/session.h"
#include "engine/io/npy.h"
#include "gtest/gtest.h"
#ifdef ATTUNE_CLI_PATH  // the CLI tests below run the tool, which a build without it lacks
#include "tests/cli/cli_test_util.h"
#endif
#include "tests/common/compare.h"
#include "tests/common/paths.h"

namespace attune {
namespace {

namespace fs = std::filesystem;
#ifdef ATTUNE_CLI_PATH
using cli_test::ErrorLine;
using cli_test::IsUsageError;
using cli_test::RunCli;
#endif

fs::path DataDir() { return fs::path(testing::SourceDir()) / "tests" / "controlflow" / "data"; }

NamedTensors ReadFolder(const fs::path& dir) {
  NamedTensors tensors;
  for (const auto& entry : fs::directory_iterator(dir)) {
    auto t = ReadNpyFile(entry.path().string());
    EXPECT_TRUE(t.ok()) << entry.path() << ": " << t.status();
    if (t.ok()) tensors.emplace_back(entry.path().stem().string(), *t);
  }
  return tensors;
}

struct Case {
  std::string model;
  std::string inputs;  // "inputs" + suffix; expected outputs in "expected" + suffix
};

class ControlFlowModelTest : public ::testing::TestWithParam<Case> {};

TEST_P(ControlFlowModelTest, MatchesOnnxRuntime) {
  const fs::path dir = DataDir() / GetParam().model;
  const std::string suffix = GetParam().inputs.substr(std::string("inputs").size());
  const NamedTensors inputs = ReadFolder(dir / GetParam().inputs);
  const NamedTensors expected = ReadFolder(dir / ("expected" + suffix));
  ASSERT_FALSE(expected.empty());
  for (bool fuse : {false, true})
    for (int threads : {1, 2}) {
      SessionOptions options;
      options.fuse = fuse;
      options.threads = threads;
      auto session = Session::Create((dir / "model.onnx").string(), options);
      ASSERT_TRUE(session.ok()) << session.status();
      auto outputs = (*session)->Run(inputs);
      ASSERT_TRUE(outputs.ok()) << outputs.status();
      for (const auto& [name, want] : expected) {
        const Tensor* got = nullptr;
        for (const auto& [n, t] : *outputs)
          if (n == name) got = &t;
        ASSERT_NE(got, nullptr) << name;
        EXPECT_EQ(got->shape(), want.shape()) << name;
        EXPECT_EQ(testing::CompareTensors(*got, want, {1e-5, 1e-5}), "") << name << " fuse " << fuse;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Models, ControlFlowModelTest,
                         ::testing::Values(Case{"if_outer_scope", "inputs_true"}, Case{"if_outer_scope", "inputs_false"},
                                           Case{"if_twins", "inputs"},
                                           Case{"loop_early_exit", "inputs"}, Case{"loop_early_exit", "inputs_trip3"},
                                           Case{"scan_axes", "inputs"}),
                         [](const auto& info) { return info.param.model + "_" + info.param.inputs; });

// A trip count of 2^62 with a condition that stays true stops at the
// session's iteration limit; with scan outputs and no trip count at all, the
// stacked output stops at the tensor limit first.
TEST(ControlFlowLimits, HugeTripCountStopsAtTheIterationLimit) {
  const fs::path dir = DataDir() / "loop_unbounded";
  SessionOptions options;
  options.max_loop_iterations = 1000;
  auto session = Session::Create((dir / "model.onnx").string(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto outputs = (*session)->Run(ReadFolder(dir / "inputs"));
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kResourceExhausted) << outputs.status();
  EXPECT_NE(outputs.status().message().find("stopped after 1000 iterations"), std::string::npos) << outputs.status();
}

TEST(ControlFlowLimits, EndlessScanOutputStopsAtTheTensorLimit) {
  const fs::path dir = DataDir() / "loop_unbounded_scan";
  SessionOptions options;
  options.max_tensor_bytes = 1 << 16;  // 8192 iterations of 8 bytes
  auto session = Session::Create((dir / "model.onnx").string(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto outputs = (*session)->Run(ReadFolder(dir / "inputs"));
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kResourceExhausted) << outputs.status();
  EXPECT_NE(outputs.status().message().find("tensor limit"), std::string::npos) << outputs.status();
}

#ifdef ATTUNE_CLI_PATH
std::vector<std::string> InputFlags(const fs::path& dir) {
  std::vector<std::string> flags;
  for (const auto& entry : fs::directory_iterator(dir)) {
    flags.push_back("--input");
    flags.push_back(entry.path().stem().string() + "=" + entry.path().string());
  }
  return flags;
}

::testing::AssertionResult CliFailsWith(const std::string& model, const std::vector<std::string>& extra,
                                        const std::vector<std::string>& parts) {
  std::vector<std::string> args = {"run", (DataDir() / model / "model.onnx").string()};
  const std::vector<std::string> inputs = InputFlags(DataDir() / model / "inputs");
  args.insert(args.end(), inputs.begin(), inputs.end());
  args.insert(args.end(), extra.begin(), extra.end());
  const cli_test::CliResult r = RunCli(args);
  auto usage = IsUsageError(r);
  if (!usage) return usage;
  for (const std::string& part : parts)
    if (ErrorLine(r).find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "error line lacks \"" << part << "\": " << ErrorLine(r);
  return ::testing::AssertionSuccess();
}

TEST(ControlFlowCli, HugeTripCountObeysMaxLoopIterations) {
  EXPECT_TRUE(CliFailsWith("loop_unbounded", {"--max-loop-iterations", "500"}, {"Loop", "stopped after 500 iterations"}));
}

TEST(ControlFlowCli, MissingOuterValueIsRefusedAtLoad) {
  EXPECT_TRUE(CliFailsWith("bad_missing_outer", {},
                           {"node Add 'reads_ghost'", "'then_branch'", "If 'if'", "'ghost'"}));
}

TEST(ControlFlowCli, BodyWithTheWrongInputCountIsRefused) {
  EXPECT_TRUE(CliFailsWith("bad_body_inputs", {},
                           {"'loop'", "Loop", "'body' has 2 inputs", "gives it 3"}));
}

TEST(ControlFlowCli, CondOfTheWrongTypeIsRefused) {
  EXPECT_TRUE(CliFailsWith("bad_cond_type", {}, {"'if'", "If", "'cond'", "bool tensor of one element", "float32[2]"}));
}

TEST(ControlFlowCli, NestingTooDeepIsRefused) {
  EXPECT_TRUE(CliFailsWith("bad_deep_nesting", {}, {"deeper than 16 levels"}));
}

#endif  // ATTUNE_CLI_PATH

}  // namespace
}  // namespace attune
