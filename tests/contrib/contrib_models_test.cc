// Files written the way ONNX Runtime's transformer optimizer and the genai
// model builder write them (gen_cases.py) run on Attune, fused and unfused,
// and give ONNX Runtime's outputs (data/<case>/expected, from ort-run; numpy
// where ONNX Runtime has no CPU kernel: data/<case>/REFERENCE says so). No
// vendor op is left after the passes, and the report says how each was mapped.
// Malformed files (data_bad/<case>) fail at load with the line their ERROR file holds.
// The saved optimised form of each runs again with the same outputs.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "absl/strings/match.h"
#include "attune/session.h"
#include "engine/io/npy.h"
#include "gtest/gtest.h"
#include "importer/onnx_importer.h"
#include "tests/common/compare.h"
#include "tests/common/paths.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> CaseDirs(const char* folder) {
  std::vector<std::string> dirs;
  const fs::path root = fs::path(testing::SourceDir()) / "tests" / "contrib" / folder;
  if (!fs::is_directory(root)) return dirs;
  for (const auto& e : fs::directory_iterator(root))
    if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path().string());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

NamedTensors ReadFolder(const fs::path& dir) {
  NamedTensors tensors;
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return tensors;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".npy") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    auto t = ReadNpyFile(f.string());
    EXPECT_TRUE(t.ok()) << t.status();
    if (t.ok()) tensors.emplace_back(f.stem().string(), *t);
  }
  return tensors;
}

std::string CaseName(const ::testing::TestParamInfo<std::string>& info) {
  return fs::path(info.param).filename().string();
}

bool IsVendorOp(const std::string& op) {
  for (const char* name : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "SimplifiedLayerNormalization",
                           "EmbedLayerNormalization", "FastGelu", "BiasGelu", "QuickGelu", "BiasAdd",
                           "GroupQueryAttention"})
    if (op == name) return true;
  return false;
}

class ContribModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ContribModelTest, MatchesOnnxRuntimeFusedAndUnfused) {
  const fs::path dir = GetParam();
  const NamedTensors inputs = ReadFolder(dir / "inputs");
  const NamedTensors expected = ReadFolder(dir / "expected");
  ASSERT_FALSE(expected.empty()) << "no expected outputs in " << dir;
  for (int fuse = 0; fuse < 2; ++fuse) {
    SessionOptions options;
    options.fuse = fuse == 1;
    auto session = Session::Create((dir / "model.onnx").string(), options);
    ASSERT_TRUE(session.ok()) << session.status();
    auto outputs = (*session)->Run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    for (const auto& [name, want] : expected) {
      auto it = std::find_if(outputs->begin(), outputs->end(), [&](const auto& o) { return o.first == name; });
      ASSERT_NE(it, outputs->end()) << "no output " << name;
      if (want.type() == ElementType::kFloat32) {
        // 1e-4 absolute, plus fp32 rounding of the larger values (|x| up to ~50 in the rotary cases).
        EXPECT_EQ(testing::CompareTensors(it->second, want, {1e-5, 1e-4}), "")
            << name << (fuse ? " (fused)" : " (unfused)");
      } else {
        EXPECT_EQ(testing::CompareTensors(it->second, want, {0.0, 0.0}), "") << name;
      }
    }
    const FusionReport& report = (*session)->fusion_report();
    // Unfused, no op of a vendor's name is left (fused, attune's own SkipLayerNormalization shares one).
    if (!fuse)
      for (const auto& [op, count] : report.ops_after) EXPECT_FALSE(IsVendorOp(op)) << op << " left in the graph";
    // Every lowered node (data/<case>/LOWERED, one name a line) has its line in the report.
    std::ifstream lowered(dir / "LOWERED");
    for (std::string node; std::getline(lowered, node);) {
      const bool mapped = std::any_of(report.op_fusions.begin(), report.op_fusions.end(), [&](const OpFusionRecord& r) {
        return r.node == node && !r.op.empty() && !r.attributes.empty();
      });
      EXPECT_TRUE(mapped) << "the report does not say how node " << node << " was mapped";
    }
  }
}

// --save-optimized of each file runs again with the same outputs; a lowered
// GroupQueryAttention is written back as itself (ONNX has no op for the
// seqlens_k contract), so a genai file's saved form has no attune op left.
TEST_P(ContribModelTest, SavedOptimizedModelGivesTheSameOutputs) {
  const fs::path dir = GetParam();
  const NamedTensors inputs = ReadFolder(dir / "inputs");
  const NamedTensors expected = ReadFolder(dir / "expected");
  auto session = Session::Create((dir / "model.onnx").string(), SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  const fs::path saved = fs::path(::testing::TempDir()) / (dir.filename().string() + "_saved.onnx");
  ASSERT_TRUE((*session)->SaveOptimizedModel(saved.string()).ok());
  auto graph = ImportModelFromFile(saved.string());
  ASSERT_TRUE(graph.ok()) << graph.status();
  int gqa = 0, attune_ops = 0;
  for (const Node* n : (*graph)->nodes()) {
    gqa += n->domain() == "com.microsoft" && n->op_type() == "GroupQueryAttention";
    attune_ops += n->domain() == "attune";
  }
  std::ifstream original(dir / "model.onnx", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(original)), std::istreambuf_iterator<char>());
  if (absl::StrContains(bytes, "GroupQueryAttention")) {
    EXPECT_GT(gqa, 0) << "the GroupQueryAttention was not written back";
    EXPECT_EQ(attune_ops, 0) << "an attune op is left in the saved form of a GroupQueryAttention file";
  }
  auto again = Session::Create(saved.string(), SessionOptions());
  ASSERT_TRUE(again.ok()) << again.status();
  auto outputs = (*again)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  for (const auto& [name, want] : expected) {
    auto it = std::find_if(outputs->begin(), outputs->end(), [&](const auto& o) { return o.first == name; });
    ASSERT_NE(it, outputs->end()) << "no output " << name;
    const double tolerance = want.type() == ElementType::kFloat32 ? 1e-4 : 0.0;
    EXPECT_EQ(testing::CompareTensors(it->second, want, {tolerance / 10, tolerance}), "") << name << " (saved)";
  }
  fs::remove(saved);
}

INSTANTIATE_TEST_SUITE_P(Cases, ContribModelTest, ::testing::ValuesIn(CaseDirs("data")), CaseName);

class ContribBadModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ContribBadModelTest, FailsAtLoadWithOneLine) {
  const fs::path dir = GetParam();
  std::ifstream in(dir / "ERROR");
  std::string want;
  std::getline(in, want);
  ASSERT_FALSE(want.empty());
  auto session = Session::Create((dir / "model.onnx").string());
  absl::Status status = session.status();
  // A fault only the inputs show (a position beyond the cache) fails the first run.
  if (session.ok()) status = (*session)->Run(ReadFolder(dir / "inputs")).status();
  ASSERT_FALSE(status.ok());
  const std::string message(status.message());
  EXPECT_TRUE(absl::StrContains(message, want)) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_TRUE(absl::IsInvalidArgument(status) || absl::IsUnimplemented(status)) << status;
}

INSTANTIATE_TEST_SUITE_P(Cases, ContribBadModelTest, ::testing::ValuesIn(CaseDirs("data_bad")), CaseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ContribBadModelTest);

}  // namespace
}  // namespace attune
