// Runs the ONNX backend node tests whose ops Attune supports and compares every
// output as ONNX's runner does. Tests listed in the allowlist of the data set
// (expected_pass.txt for the project's ONNX 1.22 copy, expected_pass_onnx112.txt
// for Debian's ONNX 1.12 set) must pass; the run prints passed / failed / skipped
// counts. Without data it exits with kSkipped, which ctest reports as a skip.
//
// usage: conformance_runner [--no-fuse] [--filter SUBSTRING] [--write-allowlist FILE] [--verbose]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "attune/session.h"
#include "core/common/status_macros.h"
#include "engine/io/npy.h"
#include "engine/session_impl.h"
#include "importer/onnx_importer.h"
#include "importer/tensor_proto.h"
#include "ops/registry.h"
#include "tests/common/compare.h"
#include "tests/common/paths.h"

namespace fs = std::filesystem;
using namespace attune;

namespace {

enum class Outcome { kPassed, kFailed, kSkipped };

// The exit code ctest's SKIP_RETURN_CODE maps to a skipped test (tests.cmake).
constexpr int kSkipped = 77;

struct Result {
  Outcome outcome;
  std::string detail;
};

absl::StatusOr<Tensor> ReadPb(const fs::path& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path.string()));
  return TensorFromProtoBytes(bytes, ImportOptions());
}

// Unsupported means: the importer or the registry says Unimplemented.
bool IsUnsupported(const absl::Status& status) { return status.code() == absl::StatusCode::kUnimplemented; }

Result RunOne(const fs::path& dir, bool fuse) {
  auto graph = ImportModelFromFile((dir / "model.onnx").string(), ImportOptions());
  if (!graph.ok()) return {IsUnsupported(graph.status()) ? Outcome::kSkipped : Outcome::kFailed,
                           std::string(graph.status().message())};
  for (const Node* node : (*graph)->nodes()) {
    const int opset = (*graph)->OpsetFor(node->domain());
    if (!DefaultKernelRegistry().Supports(node->domain(), node->op_type(), opset))
      return {Outcome::kSkipped, absl::StrCat("unsupported op ", node->op_type(), " at opset ", opset)};
  }
  std::vector<std::string> input_names, output_names;
  for (const Value* v : (*graph)->inputs())
    if (!v->is_constant()) input_names.push_back(v->name());
  for (const Value* v : (*graph)->outputs()) output_names.push_back(v->name());

  SessionOptions options;
  options.fuse = fuse;
  options.threads = 1;
  auto session = SessionImpl::Create(*std::move(graph), options);
  if (!session.ok()) return {IsUnsupported(session.status()) ? Outcome::kSkipped : Outcome::kFailed,
                             std::string(session.status().message())};
  NamedTensors inputs;
  const fs::path data = dir / "test_data_set_0";
  for (size_t i = 0; i < input_names.size(); ++i) {
    auto t = ReadPb(data / absl::StrCat("input_", i, ".pb"));
    if (!t.ok()) return {IsUnsupported(t.status()) ? Outcome::kSkipped : Outcome::kFailed,
                         absl::StrCat("input ", i, ": ", t.status().message())};
    inputs.emplace_back(input_names[i], *std::move(t));
  }
  auto outputs = (*session)->Run(inputs);
  if (!outputs.ok()) return {IsUnsupported(outputs.status()) ? Outcome::kSkipped : Outcome::kFailed,
                             std::string(outputs.status().message())};
  if (outputs->size() != output_names.size()) return {Outcome::kFailed, "output count differs"};
  for (size_t i = 0; i < output_names.size(); ++i) {
    auto expected = ReadPb(data / absl::StrCat("output_", i, ".pb"));
    if (!expected.ok()) return {IsUnsupported(expected.status()) ? Outcome::kSkipped : Outcome::kFailed,
                                absl::StrCat("expected output ", i, ": ", expected.status().message())};
    const std::string diff = testing::CompareTensors((*outputs)[i].second, *expected);
    if (!diff.empty()) return {Outcome::kFailed, absl::StrCat("output '", output_names[i], "': ", diff)};
  }
  return {Outcome::kPassed, ""};
}

std::set<std::string> ReadList(const fs::path& path) {
  std::set<std::string> names;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    names.insert(line.substr(0, line.find_first_of(" \t")));
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  bool fuse = true, verbose = false;
  std::string filter, write_allowlist;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no-fuse") fuse = false;
    else if (arg == "--verbose") verbose = true;
    else if (arg == "--filter" && i + 1 < argc) filter = argv[++i];
    else if (arg == "--write-allowlist" && i + 1 < argc) write_allowlist = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--no-fuse] [--filter S] [--write-allowlist FILE] [--verbose]\n", argv[0]);
      return 2;
    }
  }
  if (!testing::HaveBackendData()) {
    std::printf("SKIPPED: %s\n", testing::MissingBackendDataMessage().c_str());
    return kSkipped;
  }
  const fs::path root = testing::BackendNodeDir();
  const fs::path list_dir = fs::path(testing::SourceDir()) / "tests" / "conformance";
  const bool newer_set = testing::FindBackendData().set == testing::BackendData::Set::kOnnx122;
  const fs::path allowlist = list_dir / (newer_set ? "expected_pass.txt" : "expected_pass_onnx112.txt");
  const std::set<std::string> expected_pass = ReadList(allowlist);
  if (expected_pass.empty()) {
    std::fprintf(stderr, "error: empty or missing allowlist %s\n", allowlist.c_str());
    return 1;
  }
  std::printf("conformance: %s at %s, allowlist %s\n", testing::BackendSetName().c_str(), root.c_str(),
              allowlist.filename().c_str());

  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(root))
    if (entry.is_directory() && absl::StrContains(entry.path().filename().string(), filter)) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());

  int passed = 0, failed = 0, skipped = 0, regressions = 0;
  // A listed test that is not in the folder is a regression too: a data set
  // that shrinks must not pass silently.
  if (filter.empty())
    for (const std::string& name : expected_pass)
      if (!fs::is_directory(root / name)) {
        ++regressions;
        std::printf("REGRESSION %s: not found in %s\n", name.c_str(), root.c_str());
      }
  std::vector<std::string> passing, newly_passing;
  for (const fs::path& dir : dirs) {
    const std::string name = dir.filename().string();
    const Result r = RunOne(dir, fuse);
    const bool listed = expected_pass.count(name) > 0;
    switch (r.outcome) {
      case Outcome::kPassed:
        ++passed;
        passing.push_back(name);
        if (!listed) newly_passing.push_back(name);
        break;
      case Outcome::kFailed: ++failed; break;
      case Outcome::kSkipped: ++skipped; break;
    }
    if (listed && r.outcome != Outcome::kPassed) {
      ++regressions;
      std::printf("REGRESSION %s: %s\n", name.c_str(), r.detail.c_str());
    } else if (verbose && r.outcome != Outcome::kPassed) {
      std::printf("%s %s: %s\n", r.outcome == Outcome::kFailed ? "FAILED " : "SKIPPED", name.c_str(), r.detail.c_str());
    }
  }
  if (!write_allowlist.empty()) {
    std::ofstream out(write_allowlist);
    out << "# ONNX backend node tests of the " << testing::BackendSetName()
        << " set that must pass (tests/conformance/conformance_main.cc).\n";
    for (const std::string& n : passing) out << n << "\n";
  }
  for (const std::string& n : newly_passing) std::printf("newly passing (add to expected_pass.txt): %s\n", n.c_str());
  std::printf("conformance (%s): %d passed, %d failed, %d skipped-unsupported, %d of %zu expected passes regressed\n",
              fuse ? "fused" : "unfused", passed, failed, skipped, regressions, expected_pass.size());
  return regressions == 0 ? 0 : 1;
}
