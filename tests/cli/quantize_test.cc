// attune quantize and --weights through the CLI: the written MatMulNBits file
// runs in Attune with the outputs ONNX Runtime gave on the same file (stored
// in tests/weights/data/gpt2_int4_b32/ort), both print the accuracy report,
// and a bad option value is one error line with exit 2.
#include "absl/strings/str_cat.h"
#include "tests/cli/cli_test_util.h"

namespace attune::cli_test {
namespace {

const std::string kGpt2 = attune::testing::SourceDir() + "/models/hf_gpt2_prefill";
const std::string kOrtCase = attune::testing::SourceDir() + "/tests/weights/data/gpt2_int4_b32";

std::vector<std::string> Gpt2Inputs() {
  return {"--input", "input_ids=" + kGpt2 + "/inputs/input_ids.npy", "--input",
          "attention_mask=" + kGpt2 + "/inputs/attention_mask.npy"};
}

std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

bool HasAccuracyLine(const std::string& out) {
  for (const std::string& line : Lines(out))
    if (line.rfind("accuracy   ", 0) == 0 && line.find("top-1 agreement") != std::string::npos &&
        line.find("max relative error") != std::string::npos)
      return true;
  return false;
}

TEST(QuantizeCommand, WritesTheFileOnnxRuntimeRan) {
  TempDir dir;
  const std::string quantized = dir / "q.onnx";
  const CliResult q = RunCli(With({"quantize", kGpt2 + "/model.onnx", quantized, "--weights", "int4", "--block",
                                   "32", "--threads", "1"}, {}));
  // --threads is a session flag: quantize takes only its own.
  EXPECT_TRUE(IsUsageError(q));
  const CliResult r =
      RunCli(With({"quantize", kGpt2 + "/model.onnx", quantized, "--weights", "int4", "--block", "32"}, Gpt2Inputs()));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("wrote"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("products as MatMulNBits"), std::string::npos) << r.out;
  EXPECT_TRUE(HasAccuracyLine(r.out)) << r.out;
  const CliResult run = RunCli(With({"run", quantized, "--threads", "1", "--output-dir", dir / "out"}, Gpt2Inputs()));
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  auto got = ReadNpyFile(dir / "out/logits.npy");
  auto ort = ReadNpyFile(kOrtCase + "/ort/logits.npy");
  ASSERT_TRUE(got.ok() && ort.ok());
  ASSERT_EQ(got->shape(), ort->shape());
  double diff = 0, largest = 1e-30;
  for (int64_t i = 0; i < got->num_elements(); ++i) {
    diff = std::max(diff, std::fabs(double(got->data<float>()[i]) - ort->data<float>()[i]));
    largest = std::max(largest, std::fabs(double(ort->data<float>()[i])));
  }
  EXPECT_LE(diff / largest, 1e-4);
}

TEST(QuantizeCommand, RunWithWeightsPrintsTheAccuracyReport) {
  for (const char* format : {"int4", "int8", "bf16"}) {
    const CliResult r = RunCli(With({"run", kGpt2 + "/model.onnx", "--weights", format, "--threads", "1"}, Gpt2Inputs()));
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_TRUE(HasAccuracyLine(r.out)) << format << "\n" << r.out;
    EXPECT_NE(r.out.find("given inputs"), std::string::npos) << r.out;
  }
  // Without inputs, inspect generates one.
  const CliResult i = RunCli({"inspect", kGpt2 + "/model.onnx", "--weights", "int4", "--symmetric"});
  ASSERT_EQ(i.exit_code, 0) << Describe(i);
  EXPECT_TRUE(HasAccuracyLine(i.out)) << i.out;
  EXPECT_NE(i.out.find("generated input"), std::string::npos) << i.out;
  EXPECT_NE(i.out.find("MatMulNBits"), std::string::npos) << i.out;
}

TEST(QuantizeCommand, BadOptionValuesAreOneLineExitTwo) {
  TempDir dir;
  const std::string model = kGpt2 + "/model.onnx";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", model, "--weights", "int3"}, "--weights"},
      {{"run", model, "--weights", "int4", "--block", "48"}, "--block"},
      {{"run", model, "--weights", "int4", "--block", "-32"}, "--block"},
      {{"bench", model, "--weights", "int8", "--accuracy-level", "7"}, "--accuracy-level"},
      {{"inspect", model, "--block", "32"}, "need --weights"},
      {{"quantize", model, dir / "q.onnx"}, "--weights"},
      {{"quantize", model, dir / "q.onnx", "--weights", "bf16"}, "int4 or int8"},
      {{"quantize", model, model, "--weights", "int4"}, "must differ"},
      {{"quantize", model, "--weights", "int4"}, "IN.onnx and OUT.onnx"},
  };
  for (const auto& [args, part] : cases) {
    const CliResult r = RunCli(args);
    EXPECT_TRUE(IsUsageError(r)) << args[0] << " " << args.back();
    EXPECT_NE(ErrorLine(r).find(part), std::string::npos) << ErrorLine(r);
  }
}

}  // namespace
}  // namespace attune::cli_test
