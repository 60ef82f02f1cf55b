// Causal (or no) masks combined with an attention_mask input, as decoder and
// encoder exports write them: the fusion proves causal+padding or padding,
// the fused op reads the input itself, and its output equals the unfused
// graph's on every backend with left, right and full padding, with and
// without a KV cache. Traps that only look like padding stay unfused or
// explicit, and the fused op refuses attention_mask values its proof did
// not cover.
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/fusion/attention_graphs.h"
#include "tests/fusion/backend_runs.h"

namespace attune::testing {
namespace {

using Spec = AttentionGraphSpec;
using Mask = Spec::Mask;

constexpr float kFinfoMin = -std::numeric_limits<float>::max();

using Optimised = OptimisedAttentionGraph;

Optimised Optimise(const Spec& spec, bool fuse) {
  Optimised r = OptimiseAttentionGraph(spec, fuse);
  EXPECT_TRUE(r.status.ok()) << r.status;
  return r;
}

Spec Gpt2(bool past, float fill = kFinfoMin) {
  Spec s;
  s.mask = Mask::kGpt2Padding;
  s.fill = fill;
  s.past = past;
  s.context = 64;
  s.pad_left = 3;   // batch 1: its first rows see no key
  s.pad_right = 2;
  return s;
}

// Fused (on every backend) and unfused agree on `inputs`.
void ExpectSameOutputsOn(const Optimised& unfused, const Optimised& fused, const std::vector<Tensor>& inputs,
                         const std::string& label) {
  auto want = RunWith(*unfused.graph, inputs, {"default", AttentionBackend::kAuto, std::nullopt});
  ASSERT_TRUE(want.ok()) << want.status();
  for (const Backend& b : Backends()) {
    auto got = RunWith(*fused.graph, inputs, b);
    ASSERT_TRUE(got.ok()) << b.name << ": " << got.status();
    int64_t nans = 0;
    const double err = MaxErrorNanAware((*want)[0], (*got)[0], &nans);
    EXPECT_LE(err, 1e-5) << b.name << " " << label;
    std::cout << "  fused_vs_unfused_max_abs " << b.name << " " << label << " " << err << "\n";
  }
}

// Fused and unfused agree on every backend at each (seq, past), also when
// batch 1 is all padding.
void ExpectSameOutputs(const Spec& spec, const Optimised& unfused, const Optimised& fused,
                       const std::vector<std::pair<int64_t, int64_t>>& sizes) {
  for (auto [t, p] : sizes) {
    for (bool all_padded : {false, true}) {
      std::vector<Tensor> inputs = AttentionGraphInputs(spec, t, p);
      if (all_padded) {
        Tensor& mask = inputs.back();
        for (int64_t j = 0; j < p + t; ++j) mask.data<int64_t>()[p + t + j] = 0;
      }
      ExpectSameOutputsOn(unfused, fused, inputs,
                          absl::StrCat("T=", t, " past=", p, all_padded ? " all padded" : ""));
    }
  }
}

TEST(PaddingMaskTest, Gpt2FormFusesAsCausalPlusPadding) {
  const Spec spec = Gpt2(false);
  Optimised fused = Optimise(spec, true);
  ASSERT_EQ(fused.report.fusions.size(), 1u);
  const FusionRecord& f = fused.report.fusions[0];
  EXPECT_FALSE(f.undone);
  EXPECT_EQ(f.mask, "causal+padding");
  EXPECT_TRUE(f.causal);
  EXPECT_EQ(f.key_padding, "attention_mask");
  // min to keys one part hides, min + min = -inf to keys both hide: no single fill.
  EXPECT_EQ(f.masked_rows, "fills");
  EXPECT_EQ(CountOps(*fused.graph, "Softmax"), 0);
  ExpectSameOutputs(spec, Optimise(spec, false), fused, {{3, 0}, {9, 0}, {40, 0}});
}

TEST(PaddingMaskTest, Gpt2FormWithKvCache) {
  const Spec spec = Gpt2(true);
  Optimised fused = Optimise(spec, true);
  ASSERT_EQ(fused.report.fusions.size(), 1u);
  EXPECT_EQ(fused.report.fusions[0].mask, "causal+padding");
  EXPECT_TRUE(fused.report.fusions[0].has_past);
  ExpectSameOutputs(spec, Optimise(spec, false), fused, {{1, 7}, {4, 5}, {1, 30}});
}

// attention_mask's length is its own symbol next to past + seq: one key
// broadcasts to every key (key_padding_length "broadcast"), as in the unfused
// graph, on every backend; row 1's 0 hides all its keys.
TEST(PaddingMaskTest, Gpt2FormWithAMaskOfOneKey) {
  const Spec spec = Gpt2(true);
  Optimised fused = Optimise(spec, true);
  ASSERT_EQ(fused.report.fusions.size(), 1u);
  Optimised unfused = Optimise(spec, false);
  std::vector<Tensor> inputs = AttentionGraphInputs(spec, 4, 5);
  inputs.back() = *Tensor::FromVector<int64_t>({2, 1}, {1, 0});
  ExpectSameOutputsOn(unfused, fused, inputs, "T=4 past=5, attention_mask of one key");
}

TEST(PaddingMaskTest, AFillTheScoresReachGivesRowsOfTheScoresPlusTheFill) {
  // With -1e4 (older GPT-2 and BERT exports), a padded key that causal
  // attention shows gets s - 1e4, and a row whose keys are all padded
  // computes softmax(s - 1e4) over them: the fused op computes such rows from
  // the scores, so the padding fuses and the outputs stay the subgraph's.
  const Spec spec = Gpt2(false, -1e4f);
  Optimised fused = Optimise(spec, true);
  ASSERT_EQ(fused.report.fusions.size(), 1u);
  EXPECT_EQ(fused.report.fusions[0].mask, "causal+padding");
  EXPECT_EQ(fused.report.fusions[0].masked_rows, "fills");
  ExpectSameOutputs(spec, Optimise(spec, false), fused, {{3, 0}, {9, 0}, {40, 0}});
}

TEST(PaddingMaskTest, EncoderPaddingWithoutCausalPart) {
  Spec spec = Gpt2(false);
  spec.mask = Mask::kBertPadding;
  Optimised fused = Optimise(spec, true);
  ASSERT_EQ(fused.report.fusions.size(), 1u);
  EXPECT_EQ(fused.report.fusions[0].mask, "padding");
  EXPECT_FALSE(fused.report.fusions[0].causal);
  // Only a fully padded sequence has rows with no visible key: min everywhere.
  EXPECT_EQ(fused.report.fusions[0].masked_rows, "uniform");
  ExpectSameOutputs(spec, Optimise(spec, false), fused, {{5, 0}, {33, 0}});
}

TEST(PaddingMaskTest, TrapsAreNotPadding) {
  for (Mask trap : {Mask::kGpt2PaddingShifted, Mask::kPaddingOnQueries, Mask::kPaddingInverted}) {
    Spec spec = Gpt2(false);
    spec.mask = trap;
    Optimised fused = Optimise(spec, true);
    for (const FusionRecord& f : fused.report.fusions)
      EXPECT_FALSE(absl::StrContains(f.mask, "padding")) << static_cast<int>(trap) << ": " << f.mask;
    bool reason = false;
    for (const RejectedCandidate& r : fused.report.rejected) reason = reason || !r.reason.empty();
    EXPECT_TRUE(reason) << static_cast<int>(trap) << ": no reason in the report";
  }
}

TEST(PaddingMaskTest, ValuesTheProofDidNotCoverAreRefused) {
  const Spec spec = Gpt2(false);
  Optimised fused = Optimise(spec, true);
  ASSERT_EQ(fused.report.fusions.size(), 1u);
  std::vector<Tensor> inputs = AttentionGraphInputs(spec, 5, 0);
  inputs.back().data<int64_t>()[2] = 2;  // (1 - 2) * min adds +3.4e38: no mask meaning
  auto got = RunWith(*fused.graph, inputs, {"default", AttentionBackend::kAuto, std::nullopt});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(got.status().message(), "proven for the values 0 and 1")) << got.status();
}

}  // namespace
}  // namespace attune::testing
