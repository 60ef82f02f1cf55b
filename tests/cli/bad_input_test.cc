// Bad models, bad inputs and bad flags through the CLI: exit 2, one
// "error: " line on stderr, never a crash.
#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "tests/cli/cli_test_util.h"

namespace attune::cli_test {
namespace {

using attune::testing::AddInitializer;
using attune::testing::AddInput;
using attune::testing::AddNode;
using attune::testing::AddOutput;
using attune::testing::MinimalModel;
using attune::testing::RawBytes;

const std::string& MhaDir() {
  static const std::string dir = attune::testing::SourceDir() + "/models/mha_causal";
  return dir;
}
std::string MhaModel() { return MhaDir() + "/model.onnx"; }
std::string MhaInput() { return "x=" + MhaDir() + "/inputs/x.npy"; }

template <typename T>
std::string WriteNpy(const TempDir& dir, const std::string& name, std::vector<int64_t> shape, std::vector<T> values) {
  auto t = Tensor::FromVector<T>(std::move(shape), values);
  EXPECT_TRUE(t.ok());
  const std::string path = dir / name;
  EXPECT_TRUE(WriteNpyFile(path, *t).ok());
  return path;
}

std::vector<float> Zeros(size_t n) { return std::vector<float>(n, 0.0f); }

::testing::AssertionResult FailsWith(const CliResult& r, const std::string& part) {
  auto usage = IsUsageError(r);
  if (!usage) return usage;
  if (ErrorLine(r).find(part) == std::string::npos)
    return ::testing::AssertionFailure() << "error line lacks \"" << part << "\": " << ErrorLine(r);
  return ::testing::AssertionSuccess();
}

// ---- the model file ----

TEST(BadModel, TruncatedFile) {
  TempDir dir;
  const std::string bytes = ReadFile(MhaModel());
  for (size_t keep : {bytes.size() / 2, bytes.size() - 7, size_t{100}, size_t{3}}) {
    WriteFile(dir / "m.onnx", bytes.substr(0, keep));
    EXPECT_TRUE(IsUsageError(RunCli({"run", dir / "m.onnx", "--input", MhaInput()}))) << keep;
    EXPECT_TRUE(IsUsageError(RunCli({"inspect", dir / "m.onnx"}))) << keep;
  }
}

TEST(BadModel, RandomBytes) {
  TempDir dir;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    std::string bytes(1000 + trial * 997, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    WriteFile(dir / "m.onnx", bytes);
    EXPECT_TRUE(IsUsageError(RunCli({"inspect", dir / "m.onnx"}))) << trial;
  }
}

TEST(BadModel, EmptyFile) {
  TempDir dir;
  WriteFile(dir / "m.onnx", "");
  EXPECT_TRUE(IsUsageError(RunCli({"run", dir / "m.onnx"})));
  EXPECT_TRUE(IsUsageError(RunCli({"bench", dir / "m.onnx"})));
}

TEST(BadModel, MissingFile) {
  EXPECT_TRUE(FailsWith(RunCli({"run", "/nonexistent/model.onnx"}), "/nonexistent/model.onnx"));
  EXPECT_TRUE(IsUsageError(RunCli({"inspect", "/nonexistent/model.onnx", "--format", "dot"})));
}

TEST(BadModel, FolderInsteadOfFile) { EXPECT_TRUE(IsUsageError(RunCli({"inspect", MhaDir()}))); }

TEST(BadModel, UnknownOp) {
  onnx::ModelProto model = MinimalModel(17);
  AddInput(model, "x", 1, {int64_t{2}});
  AddOutput(model, "y", 1, {int64_t{2}});
  AddNode(model, "FrobnicateTensor", {"x"}, {"y"}, "mystery");
  TempDir dir;
  WriteFile(dir / "m.onnx", model.SerializeAsString());
  EXPECT_TRUE(FailsWith(RunCli({"inspect", dir / "m.onnx"}), "FrobnicateTensor"));
  const std::string x = WriteNpy<float>(dir, "x.npy", {2}, {1, 2});
  EXPECT_TRUE(FailsWith(RunCli({"run", dir / "m.onnx", "--input", "x=" + x}), "FrobnicateTensor"));
}

// Control characters in a model's names and op types reach the terminal
// escaped, on the one error line.
TEST(BadModel, ControlCharactersStayOnOneLine) {
  onnx::ModelProto model = MinimalModel(17);
  AddInput(model, "x\r\ny", 1, {int64_t{2}});
  AddOutput(model, "y", 1, {int64_t{2}});
  AddNode(model, "Frob\r\nnicate\x1b[2J", {"x\r\ny"}, {"y"}, "mystery\n");
  TempDir dir;
  WriteFile(dir / "m.onnx", model.SerializeAsString());
  const CliResult r = RunCli({"inspect", dir / "m.onnx"});
  EXPECT_TRUE(FailsWith(r, "Frob\\r\\nnicate\\x1b[2J"));
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// ---- inputs ----

TEST(BadInput, WrongDtype) {
  TempDir dir;
  const std::string path = WriteNpy<int64_t>(dir, "x.npy", {2, 11, 64}, std::vector<int64_t>(2 * 11 * 64, 1));
  EXPECT_TRUE(FailsWith(RunCli({"run", MhaModel(), "--input", "x=" + path}), "x"));
}

TEST(BadInput, WrongRank) {
  TempDir dir;
  const std::string path = WriteNpy<float>(dir, "x.npy", {11, 64}, Zeros(11 * 64));
  EXPECT_TRUE(FailsWith(RunCli({"run", MhaModel(), "--input", "x=" + path}), "x"));
}

TEST(BadInput, WrongSize) {
  TempDir dir;
  const std::string path = WriteNpy<float>(dir, "x.npy", {2, 11, 32}, Zeros(2 * 11 * 32));
  EXPECT_TRUE(FailsWith(RunCli({"run", MhaModel(), "--input", "x=" + path}), "x"));
  // The unfused graph must refuse it as well.
  EXPECT_TRUE(IsUsageError(RunCli({"run", MhaModel(), "--input", "x=" + path, "--no-fuse"})));
}

TEST(BadInput, MissingInput) { EXPECT_TRUE(FailsWith(RunCli({"run", MhaModel()}), "missing input 'x'")); }

TEST(BadInput, UnknownInputName) {
  EXPECT_TRUE(FailsWith(
      RunCli({"run", MhaModel(), "--input", MhaInput(), "--input", "nope=" + MhaDir() + "/inputs/x.npy"}), "nope"));
}

TEST(BadInput, InputFileMissing) {
  EXPECT_TRUE(FailsWith(RunCli({"run", MhaModel(), "--input", "x=/nonexistent/x.npy"}), "/nonexistent/x.npy"));
}

TEST(BadInput, MalformedNpy) {
  TempDir dir;
  const std::string good = ReadFile(MhaDir() + "/inputs/x.npy");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"garbage", "this is not a numpy file at all"},
      {"truncated_data", good.substr(0, good.size() - 100)},
      {"truncated_header", good.substr(0, 20)},
      {"bad_magic", "\x92" + good.substr(1)},
      {"bad_dtype", [&] {
         std::string s = good;
         const size_t at = s.find("<f4");
         if (at != std::string::npos) s.replace(at, 3, "<c8");
         return s;
       }()},
      {"huge_shape", [&] {
         std::string s = good;
         const size_t open = s.find('(');
         const size_t close = s.find(')');
         if (open != std::string::npos && close != std::string::npos)
           s.replace(open, close - open + 1, "(99999999999, 99999999999, 64)");
         return s;
       }()},
  };
  for (const auto& [name, bytes] : cases) {
    WriteFile(dir / (name + ".npy"), bytes);
    EXPECT_TRUE(IsUsageError(RunCli({"run", MhaModel(), "--input", "x=" + (dir / (name + ".npy"))}))) << name;
  }
}

TEST(BadInput, UnsupportedInputFileExtension) {
  EXPECT_TRUE(FailsWith(RunCli({"run", MhaModel(), "--input", "x=" + MhaModel()}), ".npy or .pb"));
}

TEST(BadInput, GatherIndexOutOfRange) {
  // y = Gather(table[5, 3], ids) with ids a graph input.
  onnx::ModelProto model = MinimalModel(17);
  AddInput(model, "ids", 7, {int64_t{2}});
  AddOutput(model, "y", 1, {int64_t{2}, int64_t{3}});
  AddInitializer(model, "table", 1, {5, 3})->set_raw_data(RawBytes(Zeros(15)));
  AddNode(model, "Gather", {"table", "ids"}, {"y"}, "lookup");
  TempDir dir;
  WriteFile(dir / "m.onnx", model.SerializeAsString());
  const std::string ok = WriteNpy<int64_t>(dir, "ok.npy", {2}, {0, 4});
  const CliResult fine = RunCli({"run", dir / "m.onnx", "--input", "ids=" + ok});
  ASSERT_EQ(fine.exit_code, 0) << Describe(fine);
  for (int64_t bad : {5, 1000, -6}) {
    const std::string path = WriteNpy<int64_t>(dir, "bad.npy", {2}, {0, bad});
    EXPECT_TRUE(IsUsageError(RunCli({"run", dir / "m.onnx", "--input", "ids=" + path}))) << bad;
  }
}

TEST(BadInput, ScatterNDIndexOutOfRange) {
  // y = ScatterND(data[4, 3], rows, updates[2, 3]) with rows [2, 1] a graph input.
  onnx::ModelProto model = MinimalModel(17);
  AddInput(model, "rows", 7, {int64_t{2}, int64_t{1}});
  AddOutput(model, "y", 1, {int64_t{4}, int64_t{3}});
  AddInitializer(model, "data", 1, {4, 3})->set_raw_data(RawBytes(Zeros(12)));
  AddInitializer(model, "updates", 1, {2, 3})->set_raw_data(RawBytes(std::vector<float>(6, 1.0f)));
  AddNode(model, "ScatterND", {"data", "rows", "updates"}, {"y"}, "mask_update");
  TempDir dir;
  WriteFile(dir / "m.onnx", model.SerializeAsString());
  const std::string ok = WriteNpy<int64_t>(dir, "ok.npy", {2, 1}, {0, -1});
  const CliResult fine = RunCli({"run", dir / "m.onnx", "--input", "rows=" + ok});
  ASSERT_EQ(fine.exit_code, 0) << Describe(fine);
  for (int64_t bad : {4, 1000, -5}) {
    const std::string path = WriteNpy<int64_t>(dir, "bad.npy", {2, 1}, {0, bad});
    const CliResult r = RunCli({"run", dir / "m.onnx", "--input", "rows=" + path});
    EXPECT_TRUE(FailsWith(r, "'mask_update'")) << bad;
    EXPECT_TRUE(FailsWith(r, absl::StrCat("indices[1, 0] = ", bad, " is out of range"))) << bad;
  }
}

TEST(BadInput, ReshapeThatDoesNotFit) {
  // y = Reshape(x, [4, 4]): only 16 elements fit.
  onnx::ModelProto model = MinimalModel(17);
  AddInput(model, "x", 1, {std::string("n")});
  AddOutput(model, "y", 1, {int64_t{4}, int64_t{4}});
  AddInitializer(model, "shape", 7, {2})->set_raw_data(RawBytes(std::vector<int64_t>{4, 4}));
  AddNode(model, "Reshape", {"x", "shape"}, {"y"}, "reshape");
  TempDir dir;
  WriteFile(dir / "m.onnx", model.SerializeAsString());
  const std::string ok = WriteNpy<float>(dir, "ok.npy", {16}, Zeros(16));
  ASSERT_EQ(RunCli({"run", dir / "m.onnx", "--input", "x=" + ok}).exit_code, 0);
  const std::string bad = WriteNpy<float>(dir, "bad.npy", {10}, Zeros(10));
  EXPECT_TRUE(FailsWith(RunCli({"run", dir / "m.onnx", "--input", "x=" + bad}), "reshape"));
}

TEST(BadInput, TensorAboveMaxTensorMb) {
  TempDir dir;
  // An input of 1.25 MiB against a 1 MiB limit.
  const std::string big = WriteNpy<float>(dir, "big.npy", {1, 5120, 64}, Zeros(5120 * 64));
  EXPECT_TRUE(IsUsageError(RunCli({"run", MhaModel(), "--input", "x=" + big, "--max-tensor-mb", "1"})));
  // A 0.3 MiB input whose unfused 2x4x600x600 scores (11 MiB) pass the limit.
  const std::string mid = WriteNpy<float>(dir, "mid.npy", {2, 600, 64}, Zeros(2 * 600 * 64));
  EXPECT_TRUE(
      IsUsageError(RunCli({"run", MhaModel(), "--input", "x=" + mid, "--max-tensor-mb", "1", "--no-fuse"})));
}

// ---- flags ----

TEST(BadFlags, UnknownFlag) {
  EXPECT_TRUE(FailsWith(RunCli({"run", MhaModel(), "--bogus"}), "--bogus"));
  EXPECT_TRUE(FailsWith(RunCli({"inspect", MhaModel(), "-x"}), "-x"));
  EXPECT_TRUE(FailsWith(RunCli({"bench", MhaModel(), "--json=yes"}), "--json"));
}

TEST(BadFlags, BadThreads) {
  for (const char* value : {"abc", "-1", "2.5", "5000", ""})
    EXPECT_TRUE(FailsWith(RunCli({"run", MhaModel(), "--input", MhaInput(), "--threads", value}), "--threads"))
        << value;
  EXPECT_TRUE(FailsWith(RunCli({"run", MhaModel(), "--threads"}), "--threads"));
}

TEST(BadFlags, InputWithoutEquals) {
  EXPECT_TRUE(FailsWith(RunCli({"run", MhaModel(), "--input", "x"}), "NAME=FILE"));
  EXPECT_TRUE(FailsWith(RunCli({"run", MhaModel(), "--input", "=x.npy"}), "NAME=FILE"));
  EXPECT_TRUE(FailsWith(RunCli({"run", MhaModel(), "--input", "x="}), "NAME=FILE"));
}

TEST(BadFlags, OtherBadValues) {
  EXPECT_TRUE(IsUsageError(RunCli({"run", MhaModel(), "--input", MhaInput(), "--attention-backend", "gpu"})));
  EXPECT_TRUE(IsUsageError(RunCli({"run", MhaModel(), "--input", MhaInput(), "--max-tensor-mb", "0"})));
  EXPECT_TRUE(IsUsageError(RunCli({"run"})));
  EXPECT_TRUE(IsUsageError(RunCli({"run", MhaModel(), MhaModel()})));
  EXPECT_TRUE(IsUsageError(RunCli({"frobnicate"})));
  EXPECT_TRUE(IsUsageError(RunCli({})));
}

TEST(Help, EveryCommandPrintsItsUsage) {
  for (const std::string command : {"run", "inspect", "bench"}) {
    for (const char* flag : {"--help", "-h"}) {
      const CliResult r = RunCli({command, flag});
      EXPECT_EQ(r.exit_code, 0) << Describe(r);
      EXPECT_EQ(r.out.rfind("usage: attune " + command + " MODEL.onnx", 0), 0u) << r.out;
      EXPECT_EQ(r.err, "");
    }
    // --help wins over other arguments, even bad ones.
    const CliResult r = RunCli({command, MhaModel(), "--bogus", "--help"});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
  }
  const CliResult inspect = RunCli({"inspect", "--help"});
  for (const char* flag : {"--format text|json|dot", "--save-optimized", "--show-all", "--disable-pass", "--passes",
                           "--stop-after PASS"})
    EXPECT_NE(inspect.out.find(flag), std::string::npos) << flag;
  const CliResult bench = RunCli({"bench", "--help"});
  for (const char* flag : {"--shape", "--dim", "--json", "--profile", "--iterations", "--warmup"})
    EXPECT_NE(bench.out.find(flag), std::string::npos) << flag;
  const CliResult top = RunCli({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("attune inspect"), std::string::npos);
}

}  // namespace
}  // namespace attune::cli_test
