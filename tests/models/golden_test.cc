// Every model in models/ runs through the engine, fused and unfused, and matches
// the stored PyTorch outputs; the fusions found match what model.json declares.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "attune/session.h"
#include "engine/io/npy.h"
#include "importer/onnx_importer.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/common/compare.h"
#include "tests/common/paths.h"
#include "tests/models/npy_folder.h"

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

class GoldenModelTest : public ::testing::TestWithParam<std::string> {};

// Largest |x| over a tensor (NaN counts as infinite).
double MaxAbs(const Tensor& t) {
  const Tensor zero = *Tensor::Create(t.type(), t.shape());
  return testing::MaxAbsDifference(t, zero);
}

// How far a model's outputs may be from PyTorch's and the fused from the
// unfused. float32 models: 1e-4 and 1e-5 absolute (the outputs are O(1)).
// A model whose attention computes in float16 or bfloat16 (model.json
// "precision") rounds every step of its subgraph to that type, and the fused
// op computes in float32 and rounds once, so they agree to a few units in the
// last place of the 16-bit type: ulps(n) is n units of the type at the largest
// |y| of the reference output. The counts are the measured worst case
// (docs/fusion.md, "Mixed precision") with a factor of about two of margin: 2 fp16
// ulps fused/unfused and 4 against PyTorch (whose reference rounds where the
// exporter's graph does, up to the order of float32 sums); bfloat16 has 8
// bits of mantissa to float16's 11, and the same counts in its own ulps.
struct Tolerances {
  double pytorch = 1e-4;
  double unfused = 1e-5;
};

Tolerances TolerancesFor(const nlohmann::json& spec, const Tensor& reference) {
  const std::string precision = spec.value("precision", "float32");
  if (precision == "float32") return {};
  const int mantissa_bits = precision == "float16" ? 10 : 7;
  const double largest = std::max(MaxAbs(reference), 1e-3);
  const double ulp = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(largest))) - mantissa_bits);
  return {4 * ulp, 2 * ulp};
}

nlohmann::json ReadSpec(const fs::path& dir) {
  std::ifstream in(dir / "model.json");
  return nlohmann::json::parse(in);
}

TEST_P(GoldenModelTest, MatchesPyTorchFusedAndUnfused) {
  const fs::path dir = GetParam();
  const nlohmann::json spec = ReadSpec(dir);
  const NamedTensors inputs = testing::ReadNpyFolder(dir / "inputs");
  const NamedTensors expected = testing::ReadNpyFolder(dir / "outputs");
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
      ASSERT_EQ(got->type(), want.type()) << name;
      EXPECT_LE(testing::MaxAbsDifference(*got, want), TolerancesFor(spec, want).pytorch)
          << name << (fuse ? " (fused)" : " (unfused)");
    }
    results[fuse] = *std::move(outputs);
  }
  for (size_t i = 0; i < results[0].size(); ++i)
    EXPECT_LE(testing::MaxAbsDifference(results[0][i].second, results[1][i].second),
              TolerancesFor(spec, results[0][i].second).unfused)
        << "fused and unfused differ on " << results[0][i].first;
}

TEST_P(GoldenModelTest, FusesExactlyTheDeclaredAttentionBlocks) {
  const fs::path dir = GetParam();
  const nlohmann::json spec = ReadSpec(dir);
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
  int causal = 0, window = 0, total = 0, structural = 0;
  for (const FusionRecord& f : report.fusions) {
    if (f.undone) continue;
    ++total;
    causal += f.mask == "causal";
    window += f.mask == "window";
    structural += absl::StrContains(f.mask, "causal") || absl::StrContains(f.mask, "window");
    if (absl::StartsWith(f.mask, "window")) {
      for (const auto& block : spec["attention_blocks"])
        if (block["mask"] == f.mask) EXPECT_EQ(f.window, block["window"].get<int64_t>());
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
    EXPECT_EQ(structural, 0) << "a trap was fused with a causal or window part";
    EXPECT_FALSE(report.rejected.empty()) << "a negative model must leave a rejection reason";
  }
}

// No silent misses: every Softmax of the model is in the fusion report, either
// replaced by a fused op or at a rejected candidate with its reason. A pass
// that recomputes a block on other tensors (unmerge_heads, unfold_query_heads)
// gives its Softmax a new name: a fusion that replaced none of the model's
// Softmax names accounts for one such Softmax.
TEST_P(GoldenModelTest, EverySoftmaxIsFusedOrRejectedWithAReason) {
  const fs::path dir = GetParam();
  auto graph = ImportModelFromFile((dir / "model.onnx").string());
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto session = Session::Create((dir / "model.onnx").string());
  ASSERT_TRUE(session.ok()) << session.status();
  const FusionReport& report = (*session)->fusion_report();
  std::vector<std::string> softmaxes;
  for (const Node* n : (*graph)->nodes())
    if (n->op_type() == "Softmax") softmaxes.push_back(n->name());
  auto is_softmax = [&](const std::string& name) {
    return std::find(softmaxes.begin(), softmaxes.end(), name) != softmaxes.end();
  };
  int fusions_of_renamed = 0;
  std::vector<std::string> fused;
  for (const FusionRecord& f : report.fusions) {
    if (f.undone) continue;
    const auto it = std::find_if(f.replaced.begin(), f.replaced.end(), is_softmax);
    if (it == f.replaced.end()) ++fusions_of_renamed;
    else fused.push_back(*it);
  }
  std::vector<std::string> unaccounted;
  for (const std::string& name : softmaxes) {
    bool rejected = false;
    // A pass that recomputes the block keeps the name as a prefix ("/Softmax/unmerged").
    for (const RejectedCandidate& r : report.rejected)
      rejected |= (r.at == name || absl::StartsWith(r.at, name + "/")) && !r.reason.empty();
    if (!rejected && std::find(fused.begin(), fused.end(), name) == fused.end()) unaccounted.push_back(name);
  }
  EXPECT_LE(static_cast<int>(unaccounted.size()), fusions_of_renamed)
      << "Softmax nodes neither fused nor rejected, e.g. '" << (unaccounted.empty() ? "" : unaccounted[0]) << "'";
}

INSTANTIATE_TEST_SUITE_P(Models, GoldenModelTest, ::testing::ValuesIn(ModelDirs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return fs::path(info.param).filename().string();
                         });

}  // namespace
}  // namespace attune
