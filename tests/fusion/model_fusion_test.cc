// Every exported model in models/ (and models/negative/) through the default
// pipeline: the fused attention blocks match what model.json declares, the
// fused graph still gives the stored PyTorch outputs, traps are rejected with
// the right reason, and running the fusion again changes nothing.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/io/npy.h"
#include "engine/optimise_graph.h"
#include "engine/passes/pass_manager.h"
#include "engine/passes/passes.h"
#include "engine/rewrite/verify_rewrite.h"
#include "gtest/gtest.h"
#include "importer/onnx_importer.h"
#include "nlohmann/json.hpp"
#include "ops/registry.h"
#include "tests/common/compare.h"
#include "tests/common/graph_builder.h"
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

struct Optimised {
  std::unique_ptr<Graph> graph;
  FusionReport report;
};

// The type a model's attention computes in (model.json "precision", float32 if absent).
ElementType Precision(const fs::path& dir) {
  std::ifstream in(dir / "model.json");
  const std::string p = nlohmann::json::parse(in).value("precision", "float32");
  return p == "float16" ? ElementType::kFloat16 : p == "bfloat16" ? ElementType::kBFloat16 : ElementType::kFloat32;
}

// How far the fused graph may be from the stored PyTorch outputs: 1e-4 for
// float32 models; for 16-bit ones 4 units in the last place of the type at the
// largest |y| (the subgraph rounds every step, the fused op once; see
// tests/models/golden_test.cc).
double OutputTolerance(ElementType precision, const Tensor& want) {
  if (precision == ElementType::kFloat32) return 1e-4;
  const double largest = std::max(testing::MaxAbsDifference(want, *Tensor::Create(want.type(), want.shape())), 1e-3);
  const int bits = precision == ElementType::kFloat16 ? 10 : 7;
  return 4 * std::ldexp(1.0, static_cast<int>(std::floor(std::log2(largest))) - bits);
}

// As a session optimises (engine/optimise_graph.h): a decoder may be
// optimised under its mask-length convention.
Optimised Optimise(const fs::path& dir, bool fuse, bool verify = false) {
  Optimised out;
  auto graph = ImportModelFromFile((dir / "model.onnx").string());
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return out;
  SessionOptions options;
  options.fuse = fuse;
  options.verify_fusion = verify;
  auto optimised = OptimiseGraph(*std::move(graph), options);
  EXPECT_TRUE(optimised.ok()) << optimised.status();
  if (!optimised.ok()) return out;
  out.graph = std::move(optimised->graph);
  out.report = std::move(optimised->report);
  return out;
}

// The model's inputs in graph-input order, from inputs/<name>.npy.
std::vector<Tensor> ReadInputs(const fs::path& dir, const Graph& graph) {
  std::vector<Tensor> inputs;
  for (const Value* in : graph.inputs()) {
    if (in->is_constant()) continue;
    auto t = ReadNpyFile((dir / "inputs" / (in->name() + ".npy")).string());
    EXPECT_TRUE(t.ok()) << t.status();
    inputs.push_back(t.ok() ? *t : Tensor());
  }
  return inputs;
}

std::string TrapReason(const std::string& trap) {
  if (trap == "mask_not_causal" || trap == "mask_anticausal") return "mask differs from causal";
  if (trap == "mask_from_input") return "mask depends on input values";
  if (trap == "softmax_axis") return "softmax axis is not the key axis";
  if (trap == "scale_not_constant") return "scale is not a constant";
  // The "bias" reads the scores: they are an intermediate the fused op would hide.
  if (trap == "bias_reads_scores") return "is also read by ReduceMean";
  // scores * bias: read as a second factor on the scores, which is not a constant.
  if (trap == "bias_multiplied") return "scale is not a constant";
  if (trap == "heads_order") return "another order of the batch and head axes";
  // A column concatenated after the keys that is not an attention sink, or a sink the Slice keeps.
  if (trap == "sink_not_per_head") return "not a constant per head";
  if (trap == "sink_slice_keeps_sink") return "not the keys";
  return "?";
}

void PrintReport(const std::string& name, const FusionReport& report) {
  for (const FusionRecord& f : report.fusions)
    std::cout << "  [" << name << "] fused " << f.node << " " << f.pattern << " mask=" << f.mask << " window=" << f.window
              << " heads=" << f.num_heads << "/" << f.kv_num_heads << " d=" << f.head_dim << " scale=" << f.scale
              << " layout=" << f.q_layout << " past=" << f.has_past << " replaced=" << f.replaced.size()
              << (f.undone ? " UNDONE" : "") << "\n";
  for (const RejectedCandidate& r : report.rejected)
    std::cout << "  [" << name << "] rejected at " << r.at << " " << r.pattern << ": " << r.reason << "\n";
}

class ModelFusionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelFusionTest, FusesTheDeclaredBlocksAndKeepsTheOutputs) {
  const fs::path dir = GetParam();
  std::ifstream in(dir / "model.json");
  const nlohmann::json spec = nlohmann::json::parse(in);
  Optimised fused = Optimise(dir, true);
  ASSERT_NE(fused.graph, nullptr);
  PrintReport(dir.filename().string(), fused.report);

  int declared_causal = 0, declared_window = 0;
  for (const auto& block : spec["attention_blocks"]) {
    declared_causal += block["mask"] == "causal";
    declared_window += block["mask"] == "window";
  }
  // A causal block the fusion does not read yet says so (as traps do), so that
  // fusing it later shows up as a change to review here.
  declared_causal = spec.value("expected_causal_fusions", declared_causal);
  const bool negative = spec.value("negative", false);
  int causal = 0, window = 0, total = 0, structural = 0;
  std::vector<std::string> fused_kinds;
  for (const FusionRecord& f : fused.report.fusions) {
    if (f.undone) continue;
    ++total;
    causal += f.mask == "causal";
    window += f.mask == "window";
    structural += absl::StrContains(f.mask, "causal") || absl::StrContains(f.mask, "window");
    fused_kinds.push_back(f.mask);
    size_t block = std::min<size_t>(total - 1, spec["attention_blocks"].size() - 1);
    const auto& b = spec["attention_blocks"][block];
    EXPECT_EQ(f.num_heads, b["num_heads"].get<int64_t>()) << f.node;
    EXPECT_EQ(f.kv_num_heads, b["kv_num_heads"].get<int64_t>()) << f.node;
    EXPECT_EQ(f.head_dim, b["head_dim"].get<int64_t>()) << f.node;
    if (absl::StartsWith(f.mask, "window")) EXPECT_EQ(f.window, b["window"].get<int64_t>()) << f.node;
    if (b.contains("past")) EXPECT_EQ(f.has_past, b["past"].get<bool>()) << f.node << " reads its KV cache";
    EXPECT_FALSE(f.replaced.empty());
  }
  EXPECT_EQ(testing::CountOps(*fused.graph, "MultiHeadAttention"), total);
  if (negative) {
    EXPECT_EQ(structural, 0) << "a trap was fused with a causal or window part";
    const std::string want = TrapReason(spec["trap"].get<std::string>());
    bool found = false;
    for (const RejectedCandidate& r : fused.report.rejected) found |= absl::StrContains(r.reason, want);
    EXPECT_TRUE(found) << "no rejection says '" << want << "'";
    if (!spec["explicit_fusion_allowed"].get<bool>()) EXPECT_EQ(total, 0);
  } else {
    EXPECT_EQ(causal, declared_causal);
    EXPECT_EQ(window, declared_window);
    EXPECT_EQ(total, spec["expected_fusions"].get<int>());
    // Every block fused: each with its declared mask kind ("causal+padding", "explicit", ...).
    if (total == static_cast<int>(spec["attention_blocks"].size())) {
      std::vector<std::string> declared_kinds;
      for (const auto& block : spec["attention_blocks"]) declared_kinds.push_back(block["mask"].get<std::string>());
      std::sort(declared_kinds.begin(), declared_kinds.end());
      std::sort(fused_kinds.begin(), fused_kinds.end());
      EXPECT_EQ(fused_kinds, declared_kinds);
    }
    // Every declared block left unfused is explained in the report, and no other attention is rejected.
    // A block fused with its mask as an explicit input may also say why it was not fused as
    // causal: that rejection is anchored at a node the fusion replaced.
    const int unfused = static_cast<int>(spec["attention_blocks"].size()) - total;
    int unexplained = 0;
    for (const RejectedCandidate& r : fused.report.rejected) {
      // Near misses of the op fusions (a norm of a sum that is not a residual) explain no block.
      if (!absl::StartsWith(r.pattern, "attention")) continue;
      bool fused_explicitly = false;
      for (const FusionRecord& f : fused.report.fusions)
        fused_explicitly |= !f.undone && f.mask == "explicit" &&
                            std::find(f.replaced.begin(), f.replaced.end(), r.at) != f.replaced.end();
      unexplained += !fused_explicitly;
    }
    EXPECT_EQ(unexplained, unfused);
  }

  // The fused graph still computes the stored outputs.
  auto outputs = testing::RunGraph(*fused.graph, DefaultKernelRegistry(), ReadInputs(dir, *fused.graph));
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  for (size_t i = 0; i < fused.graph->outputs().size(); ++i) {
    const std::string& name = fused.graph->outputs()[i]->name();
    auto want = ReadNpyFile((dir / "outputs" / (name + ".npy")).string());
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_EQ((*outputs)[i].shape(), want->shape()) << name;
    EXPECT_LE(testing::MaxAbsDifference((*outputs)[i], *want), OutputTolerance(Precision(dir), *want)) << name;
  }
}

TEST_P(ModelFusionTest, FusionIsIdempotentAndLeavesNoDeadNodes) {
  const fs::path dir = GetParam();
  Optimised fused = Optimise(dir, true);
  ASSERT_NE(fused.graph, nullptr);
  const int nodes = fused.graph->num_nodes();
  FusionReport again;
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = &again;
  auto changed = MakeAttentionFusionPass()->Run(*fused.graph, context);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_TRUE(again.fusions.empty());
  EXPECT_EQ(fused.graph->num_nodes(), nodes);
  EXPECT_EQ(fused.graph->RemoveDeadNodes(), 0);
}

TEST_P(ModelFusionTest, VerifyModeMeasuresEveryFusion) {
  const fs::path dir = GetParam();
  Optimised fused = Optimise(dir, true, /*verify=*/true);
  ASSERT_NE(fused.graph, nullptr);
  for (const FusionRecord& f : fused.report.fusions) {
    ASSERT_TRUE(f.verify_max_abs_error.has_value()) << f.node;
    EXPECT_LE(*f.verify_max_abs_error, VerifyTolerance(Precision(dir))) << f.node;
    EXPECT_FALSE(f.undone);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ModelFusionTest, ::testing::ValuesIn(ModelDirs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return fs::path(info.param).filename().string();
                         });

}  // namespace
}  // namespace attune
