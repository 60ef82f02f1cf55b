// Test helpers for the attune CLI: run the built binary, find the example
// models, compare .npy outputs.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "attune/tensor.h"
#include "engine/io/npy.h"
#include "tests/common/paths.h"
#include "tests/importer/model_builder.h"

namespace attune::cli_test {

using attune::testing::ReadFile;
using attune::testing::TempDir;
using attune::testing::WriteFile;

struct CliResult {
  int exit_code = -1;  // -1 when the process did not exit normally
  int signal = 0;      // the signal that ended it, 0 if none
  std::string out;
  std::string err;
};

/// Runs `attune args...` with stdout and stderr captured.
inline CliResult RunCli(const std::vector<std::string>& args) {
  TempDir dir;
  const std::string out_path = dir / "stdout", err_path = dir / "stderr";
  std::vector<std::string> argv_storage = {ATTUNE_CLI_PATH};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  CliResult result;
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null_in = open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || null_in < 0) _exit(127);
    dup2(null_in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  if (pid > 0 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (pid > 0 && WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

inline std::string Describe(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + " signal " + std::to_string(r.signal) + "\nstdout:\n" +
         r.out.substr(0, 3000) + "\nstderr:\n" + r.err.substr(0, 3000);
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

/// The contract for bad usage, model or input: exit 2, exactly one
/// "error: " line on stderr, no crash.
inline ::testing::AssertionResult IsUsageError(const CliResult& r) {
  if (r.signal != 0) return ::testing::AssertionFailure() << "crashed: " << Describe(r);
  if (r.exit_code != 2) return ::testing::AssertionFailure() << "expected exit 2: " << Describe(r);
  int error_lines = 0;
  for (const std::string& line : Lines(r.err)) error_lines += line.rfind("error: ", 0) == 0;
  if (error_lines != 1) return ::testing::AssertionFailure() << error_lines << " error lines: " << Describe(r);
  return ::testing::AssertionSuccess();
}

/// The one "error: " line of stderr.
inline std::string ErrorLine(const CliResult& r) {
  for (const std::string& line : Lines(r.err))
    if (line.rfind("error: ", 0) == 0) return line;
  return "";
}

/// One example model folder (models/<name> or models/negative/<name>).
struct ModelCase {
  std::string name;  // "mha_causal", "negative/anticausal_mask"
  std::string dir;
  std::string model() const { return dir + "/model.onnx"; }
  nlohmann::json info() const { return nlohmann::json::parse(ReadFile(dir + "/model.json")); }
  /// --input NAME=FILE for every file in inputs/.
  std::vector<std::string> InputFlags() const {
    std::vector<std::string> flags;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir + "/inputs")) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      flags.push_back("--input");
      flags.push_back(f.stem().string() + "=" + f.string());
    }
    return flags;
  }
  std::vector<std::string> OutputNames() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir + "/outputs")) names.push_back(e.path().stem());
    std::sort(names.begin(), names.end());
    return names;
  }
};

/// How many nodes of `op` an inspect report's op histogram (ops_before, ops_after) holds.
inline int Count(const nlohmann::json& histogram, const std::string& op) { return histogram.value(op, 0); }

/// models/<name>.
inline ModelCase Model(const std::string& name) { return {name, attune::testing::SourceDir() + "/models/" + name}; }

inline std::vector<ModelCase> AllModels() {
  std::vector<ModelCase> models;
  const std::string root = attune::testing::SourceDir() + "/models";
  for (const std::string& sub : {std::string(), std::string("negative/")}) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(root + "/" + sub, ec)) {
      if (!std::filesystem::exists(e.path() / "model.onnx")) continue;
      models.push_back({sub + e.path().filename().string(), e.path().string()});
    }
  }
  std::sort(models.begin(), models.end(), [](const ModelCase& a, const ModelCase& b) { return a.name < b.name; });
  return models;
}

inline std::string TestName(const ::testing::TestParamInfo<ModelCase>& info) {
  std::string name = info.param.name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

/// Largest |a - b| between two float32 .npy files; +inf when shapes differ or a file is unreadable.
inline double ElementValue(const attune::Tensor& t, int64_t i) {
  switch (t.type()) {
    case attune::ElementType::kFloat16: return attune::HalfToFloat(t.data<attune::Float16>()[i]);
    case attune::ElementType::kBFloat16: return attune::BFloat16ToFloat(t.data<attune::BFloat16>()[i]);
    case attune::ElementType::kFloat64: return t.data<double>()[i];
    case attune::ElementType::kFloat32: return t.data<float>()[i];
    default: return NAN;
  }
}

inline double MaxAbsDiff(const std::string& a_path, const std::string& b_path) {
  // Any float type (float16 outputs of 16-bit models too), compared as doubles.
  const auto a = attune::ReadNpyFile(a_path);
  const auto b = attune::ReadNpyFile(b_path);
  if (!a.ok() || !b.ok() || a->shape() != b->shape() || a->num_elements() == 0) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < a->num_elements(); ++i) {
    const double d = std::fabs(ElementValue(*a, i) - ElementValue(*b, i));
    if (std::isnan(d)) return INFINITY;
    worst = std::max(worst, d);
  }
  return worst;
}

/// How far a model's output may be from the reference at `reference_path`:
/// `float32_tolerance` for float32 models; for float16 / bfloat16 ones
/// (model.json "precision") `ulps` units in the last place of that type at the
/// reference's largest |y|, as tests/models/golden_test.cc sets them (4 against
/// PyTorch, 2 between two runs of the engine).
inline double ModelTolerance(const nlohmann::json& info, const std::string& reference_path, double float32_tolerance,
                             int ulps) {
  const std::string precision = info.value("precision", "float32");
  if (precision == "float32") return float32_tolerance;
  const auto ref = attune::ReadNpyFile(reference_path);
  double largest = 1e-3;
  for (int64_t i = 0; ref.ok() && i < ref->num_elements(); ++i) largest = std::max(largest, std::fabs(ElementValue(*ref, i)));
  const int bits = precision == "float16" ? 10 : 7;
  return ulps * std::ldexp(1.0, static_cast<int>(std::floor(std::log2(largest))) - bits);
}

inline std::string DotPath() {
#ifdef ATTUNE_DOT_PATH
  if (std::filesystem::exists(ATTUNE_DOT_PATH)) return ATTUNE_DOT_PATH;
#endif
  for (const char* p : {"/usr/bin/dot", "/usr/local/bin/dot"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

}  // namespace attune::cli_test
