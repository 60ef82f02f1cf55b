// Saved causal models run on ONNX Runtime: `--save-optimized` writes their
// fused attention as the standard ONNX Attention op (with attention sinks,
// which it lacks, and with attention weights where ONNX Attention cannot give
// them, as the standard subgraph). tests/models/ort_saved/
// holds, per model, what ONNX Runtime 1.30 computed on the saved file
// (make_fixtures.py); here the saved file is written again, must hold only
// standard ops, and, re-imported, must give ONNX Runtime's outputs and
// PyTorch's. No ONNX Runtime is needed.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "attune/session.h"
#include "gtest/gtest.h"
#include "importer/onnx_importer.h"
#include "tests/common/compare.h"
#include "tests/common/paths.h"
#include "tests/models/npy_folder.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

fs::path FixtureRoot() { return fs::path(testing::SourceDir()) / "tests" / "models" / "ort_saved"; }

std::vector<std::string> FixtureModels() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(FixtureRoot()))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

const Tensor* Find(const NamedTensors& tensors, const std::string& name) {
  for (const auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

class SavedOnnxAttentionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SavedOnnxAttentionTest, SavedFileHoldsOnnxAttentionAndGivesOnnxRuntimesOutputs) {
  const fs::path model = fs::path(testing::SourceDir()) / "models" / GetParam();
  auto session = Session::Create((model / "model.onnx").string());
  ASSERT_TRUE(session.ok()) << session.status();
  int fused = 0;
  for (const FusionRecord& f : (*session)->fusion_report().fusions) fused += !f.undone;
  ASSERT_GT(fused, 0);

  const fs::path saved = fs::temp_directory_path() / ("attune_saved_" + GetParam() + ".onnx");
  ASSERT_TRUE((*session)->SaveOptimizedModel(saved.string()).ok());
  auto graph = ImportModelFromFile(saved.string());
  ASSERT_TRUE(graph.ok()) << graph.status();
  int attention = 0, softmax = 0;
  for (const Node* n : (*graph)->nodes()) {
    EXPECT_TRUE(n->domain().empty() || n->domain() == "ai.onnx")
        << n->op_type() << " '" << n->name() << "' is not a standard op: ONNX Runtime cannot run it";
    attention += n->op_type() == "Attention";
    softmax += n->op_type() == "Softmax";  // a block with attention sinks, written as its subgraph
  }
  EXPECT_EQ(attention + softmax, fused);

  const NamedTensors inputs = testing::ReadNpyFolder(model / "inputs");
  const NamedTensors pytorch = testing::ReadNpyFolder(model / "outputs");
  const NamedTensors ort = testing::ReadNpyFolder(FixtureRoot() / GetParam());
  ASSERT_FALSE(ort.empty());
  auto reread = Session::Create(saved.string());
  ASSERT_TRUE(reread.ok()) << reread.status();
  auto outputs = (*reread)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  fs::remove(saved);
  for (const auto& [name, want] : ort) {
    const Tensor* got = Find(*outputs, name);
    const Tensor* torch = Find(pytorch, name);
    ASSERT_NE(got, nullptr) << "no output " << name;
    ASSERT_NE(torch, nullptr) << "no PyTorch output " << name;
    ASSERT_EQ(got->shape(), want.shape()) << name;
    EXPECT_LE(testing::MaxAbsDifference(*got, want), 1e-4) << name << ": Attune and ONNX Runtime on the saved file";
    EXPECT_LE(testing::MaxAbsDifference(want, *torch), 1e-4) << name << ": ONNX Runtime on the saved file and PyTorch";
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SavedOnnxAttentionTest, ::testing::ValuesIn(FixtureModels()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace attune
