// Every model in models/ runs through the engine, fused and unfused, and matches
// the stored PyTorch outputs; the fusions found match what model.json declares.
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "attune/session.h"
#include "engine/io/npy.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/common/compare.h"
#include "tests/common/paths.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> ModelDirs() {
  std::vector<std::string> dirs;
  const fs::path root = fs::path(testing::SourceDir()) / "models";
  for (const fs::path& base : {root, root / "negative"}) {
    if (!fs::is_directory(base)) continue;
    for (const auto& e : fs::directory_iterator(base))
      if (fs::exists(e.path() / "model.json") && fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

NamedTensors ReadFolder(const fs::path& dir) {
  NamedTensors tensors;
  std::vector<fs::path> files;
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

class GoldenModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenModelTest, MatchesPyTorchFusedAndUnfused) {
  const fs::path dir = GetParam();
  const NamedTensors inputs = ReadFolder(dir / "inputs");
  const NamedTensors expected = ReadFolder(dir / "outputs");
  ASSERT_FALSE(expected.empty());

  NamedTensors results[2];
  for (int fuse = 0; fuse < 2; ++fuse) {
    SessionOptions options;
    options.fuse = fuse == 1;
    auto session = Session::Create((dir / "model.onnx").string(), options);
    ASSERT_TRUE(session.ok()) << session.status();
    auto outputs = (*session)->Run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    for (const auto& [name, want] : expected) {
      const Tensor* got = nullptr;
      for (const auto& [n, t] : *outputs)
        if (n == name) got = &t;
      ASSERT_NE(got, nullptr) << "no output " << name;
      ASSERT_EQ(got->shape(), want.shape()) << name;
      EXPECT_LE(testing::MaxAbsDifference(*got, want), 1e-4) << name << (fuse ? " (fused)" : " (unfused)");
    }
    results[fuse] = *std::move(outputs);
  }
  for (size_t i = 0; i < results[0].size(); ++i)
    EXPECT_LE(testing::MaxAbsDifference(results[0][i].second, results[1][i].second), 1e-5)
        << "fused and unfused differ on " << results[0][i].first;
}

TEST_P(GoldenModelTest, FusesExactlyTheDeclaredAttentionBlocks) {
  const fs::path dir = GetParam();
  std::ifstream in(dir / "model.json");
  const nlohmann::json spec = nlohmann::json::parse(in);
  auto session = Session::Create((dir / "model.onnx").string());
  ASSERT_TRUE(session.ok()) << session.status();
  const FusionReport& report = (*session)->fusion_report();

  int declared_causal = 0, declared_window = 0;
  for (const auto& block : spec["attention_blocks"]) {
    declared_causal += block["mask"] == "causal";
    declared_window += block["mask"] == "window";
  }
  // A trap model may hold a causal mask and still must not fuse as causal
  // (wrong softmax axis, input-dependent scale): it says so explicitly.
  declared_causal = spec.value("expected_causal_fusions", declared_causal);
  int causal = 0, window = 0, total = 0;
  for (const FusionRecord& f : report.fusions) {
    if (f.undone) continue;
    ++total;
    causal += f.mask == "causal";
    window += f.mask == "window";
    if (f.mask == "window") {
      for (const auto& block : spec["attention_blocks"])
        if (block["mask"] == "window") EXPECT_EQ(f.window, block["window"].get<int64_t>());
    }
  }
  EXPECT_EQ(causal, declared_causal);
  EXPECT_EQ(window, declared_window);
  // Blocks with a position bias fuse with it, as the kind they declare
  // ("causal+padding+bias" ...), unless the model says fewer do.
  std::map<std::string, int> declared_bias, fused_bias;
  for (const auto& block : spec["attention_blocks"]) {
    const std::string mask = block["mask"];
    if (mask == "bias" || absl::EndsWith(mask, "+bias")) ++declared_bias[mask];
  }
  for (const FusionRecord& f : report.fusions)
    if (!f.undone && (f.mask == "bias" || absl::EndsWith(f.mask, "+bias"))) {
      ++fused_bias[f.mask];
      EXPECT_FALSE(f.bias.empty()) << f.node << ": a " << f.mask << " fusion names no bias";
    }
  if (spec.value("expected_fusions", 0) >= static_cast<int>(spec["attention_blocks"].size()))
    EXPECT_EQ(fused_bias, declared_bias);
  else
    for (const auto& [mask, n] : fused_bias) EXPECT_LE(n, declared_bias[mask]) << mask;
  EXPECT_GE(total, spec["expected_fusions"].get<int>());
  EXPECT_LE(total, static_cast<int>(spec["attention_blocks"].size()));
  if (spec.value("negative", false)) {
    EXPECT_EQ(causal, 0);
    EXPECT_FALSE(report.rejected.empty()) << "a negative model must leave a rejection reason";
  }
}

INSTANTIATE_TEST_SUITE_P(Models, GoldenModelTest, ::testing::ValuesIn(ModelDirs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return fs::path(info.param).filename().string();
                         });

}  // namespace
}  // namespace attune
