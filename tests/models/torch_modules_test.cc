// PyTorch's own attention modules (models/torch_*: nn.MultiheadAttention,
// nn.TransformerEncoderLayer, nn.TransformerDecoderLayer, nn.TransformerEncoder,
// nn.Transformer) merge their heads into the batch. Each must fuse with the
// true head count and the mask kind its model.json declares, block for block;
// the golden test compares their outputs with PyTorch's and the unfused run.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "attune/session.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/common/paths.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> TorchModuleDirs() {
  std::vector<std::string> dirs;
  const fs::path root = fs::path(testing::SourceDir()) / "models";
  for (const auto& e : fs::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("torch_", 0) == 0 && fs::exists(e.path() / "model.json")) dirs.push_back(e.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

class TorchModuleTest : public ::testing::TestWithParam<std::string> {};

using Block = std::tuple<std::string, int64_t, int64_t>;  // mask, heads, head size

TEST_P(TorchModuleTest, FusesWithTheTrueHeadsAndMask) {
  const fs::path dir = GetParam();
  std::ifstream in(dir / "model.json");
  const nlohmann::json spec = nlohmann::json::parse(in);
  auto session = Session::Create((dir / "model.onnx").string());
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Block> fused;
  for (const FusionRecord& f : (*session)->fusion_report().fusions)
    if (!f.undone && f.op == "MultiHeadAttention") fused.emplace_back(f.mask, f.num_heads, f.head_dim);
  std::sort(fused.begin(), fused.end());
  if (spec.value("negative", false)) {
    for (const Block& b : fused) EXPECT_EQ(std::get<0>(b).find("causal"), std::string::npos) << "a trap fused as causal";
    return;
  }
  std::vector<Block> declared;
  for (const auto& b : spec["attention_blocks"])
    declared.emplace_back(b["mask"].get<std::string>(), b["num_heads"].get<int64_t>(), b["head_dim"].get<int64_t>());
  std::sort(declared.begin(), declared.end());
  if (spec["expected_fusions"].get<size_t>() < declared.size()) {
    EXPECT_EQ(fused.size(), spec["expected_fusions"].get<size_t>());
    return;
  }
  EXPECT_EQ(fused, declared);
  // The heads are split back out of the batch: never one head per batch·head.
  for (const Block& b : fused) EXPECT_EQ(std::get<1>(b), spec.value("module_heads", std::get<1>(b)));
}

INSTANTIATE_TEST_SUITE_P(Models, TorchModuleTest, ::testing::ValuesIn(TorchModuleDirs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return fs::path(info.param).filename().string();
                         });

}  // namespace
}  // namespace attune
