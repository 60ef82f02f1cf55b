// Differential tests of the attention fusion on hand-built graphs, one per
// exporter variant: the fused graph must give the unfused graph's outputs
// (within 1e-5) at several sequence lengths, with the expected number of
// fused ops, mask kind and report.
#include <iostream>

#include "absl/strings/match.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/common/compare.h"
#include "tests/fusion/attention_graphs.h"

namespace attune::testing {
namespace {

using Spec = AttentionGraphSpec;
using Mask = Spec::Mask;
using Scale = Spec::Scale;

struct Case {
  std::string name;
  Spec spec;
  int fused = 1;
  std::string mask_kind = "causal";  // of the fusion, when fused
  std::string reason;                // a rejection must contain this, when set
  int64_t window = 0;
  int64_t kv_heads = 0;  // expected kv_num_heads when non-zero
  /// (T, past) sizes the fused and unfused graphs are compared at; empty: the default set.
  std::vector<std::pair<int64_t, int64_t>> sizes = {};
};

Spec With(std::function<void(Spec&)> edit) {
  Spec s;
  edit(s);
  return s;
}

// Windows of 4, 16, 64 and 128 in three spellings (a Range comparison with
// the window constant, Trilu with k = 1 - w, a band in a constant buffer),
// with and without a KV cache, each compared at lengths beyond the window.
// A window must be proven as itself: a window of 16 is never causal.
void AddWindowCases(std::vector<Case>& cases) {
  for (int64_t w : {4, 16, 64, 128}) {
    const std::vector<std::pair<int64_t, int64_t>> beyond = {{w + 5, 0}, {2 * w + 3, 0}, {w / 2 + 1, w + 2}};
    const std::string n = std::to_string(w);
    cases.push_back({"window_" + n + "_range", With([&](Spec& s) {
                       s.mask = Mask::kWindowRange;
                       s.window = w;
                     }), 1, "window", "", w, 0, beyond});
    cases.push_back({"window_" + n + "_range_with_past", With([&](Spec& s) {
                       s.mask = Mask::kWindowRange;
                       s.window = w;
                       s.past = true;
                     }), 1, "window", "", w, 0, {{1, w + 7}, {3, 2 * w}, {w + 2, 5}}});
    cases.push_back({"window_" + n + "_trilu", With([&](Spec& s) {
                       s.mask = Mask::kWindowTrilu;
                       s.window = w;
                     }), 1, "window", "", w, 0, {{w + 5, 0}, {2 * w + 3, 0}}});
    cases.push_back({"window_" + n + "_buffer", With([&](Spec& s) {
                       s.window = w;
                       s.context = 2 * w + 16;
                     }), 1, "window", "", w, 0, {{w + 5, 0}, {2 * w + 16, 0}}});
  }
}

std::vector<Case> Cases() {
  const float finfo_min = -3.4028234663852886e38f;
  return {
      {"div_scores_where_buffer", Spec{}},
      {"mul_scores_where_keep_finfo_min", With([&](Spec& s) {
         s.scale = Scale::kMulScores;
         s.mask = Mask::kWhereKeepBuffer;
         s.fill = finfo_min;
       })},
      {"mul_q_add_buffer", With([](Spec& s) {
         s.scale = Scale::kMulQ;
         s.mask = Mask::kAddBuffer;
       })},
      {"div_q_fill_neg1e9", With([](Spec& s) {
         s.scale = Scale::kDivQ;
         s.fill = -1e9f;
       })},
      {"sqrt_scale_both_tril_runtime", With([](Spec& s) {
         s.scale = Scale::kSqrtBoth;
         s.mask = Mask::kTrilRuntime;
       })},
      {"no_scale_no_mask", With([](Spec& s) {
         s.scale = Scale::kNone;
         s.mask = Mask::kNone;
       }), 1, "none"},
      {"mask_before_scale_fill_neg1e4", With([](Spec& s) {
         s.mask_before_scale = true;
         s.fill = -1e4f;
       })},
      {"range_logic_with_past", With([](Spec& s) {
         s.mask = Mask::kRangeLogic;
         s.past = true;
       })},
      {"buffer_with_past", With([](Spec& s) { s.past = true; })},
      {"sdpa_causal_bias", With([](Spec& s) { s.mask = Mask::kSdpaBias; })},
      {"zero_bias_is_no_mask", With([](Spec& s) { s.mask = Mask::kZeroBias; }), 1, "none"},
      {"window_4", With([](Spec& s) { s.window = 4; }), 1, "window", "", 4},
      {"window_4_with_past", With([](Spec& s) {
         s.window = 4;
         s.past = true;
       }), 1, "window", "", 4},
      {"k_pretransposed", With([](Spec& s) { s.k_pretransposed = true; })},
      {"single_head_causal", With([](Spec& s) { s.single_head = true; })},
      {"single_head_no_mask", With([](Spec& s) {
         s.single_head = true;
         s.mask = Mask::kNone;
       }), 1, "none"},
      {"gqa_expand", With([](Spec& s) { s.kv_heads = 2; }), 1, "causal", "", 0, 2},
      {"gqa_tile_grouped", With([](Spec& s) {
         s.kv_heads = 2;
         s.repeat = Spec::Repeat::kTileGrouped;
       }), 1, "causal", "", 0, 2},
      // Tile repeats heads as h % Hkv: not grouped, so the repeated K/V go in as they are.
      {"gqa_tile_flat_not_grouped", With([](Spec& s) {
         s.kv_heads = 2;
         s.repeat = Spec::Repeat::kTileFlat;
       }), 1, "causal", "", 0, 4},
      {"mqa_tile_flat", With([](Spec& s) {
         s.kv_heads = 1;
         s.repeat = Spec::Repeat::kTileFlat;
       }), 1, "causal", "", 0, 1},
      {"gqa_with_past", With([](Spec& s) {
         s.kv_heads = 2;
         s.past = true;
       }), 1, "causal", "", 0, 2},
      {"dropout_nan_guard_identities", With([](Spec& s) {
         s.dropout = true;
         s.nan_guard = true;
         s.identity_wrappers = true;
       })},
      {"opset13", With([](Spec& s) { s.opset = 13; })},
      {"opset11", With([](Spec& s) { s.opset = 11; })},
      {"opset13_default_softmax_axis", With([](Spec& s) {
         s.opset = 13;
         s.omit_softmax_axis = true;
       })},
      // Before opset 13 Softmax defaults to axis 1 and flattens from there: not per key row.
      {"opset11_default_softmax_axis", With([](Spec& s) {
         s.opset = 11;
         s.omit_softmax_axis = true;
       }), 0, "", "softmax axis is not the key axis (axis 1 of rank 4)"},
      // Axis rank-1 written as a positive number is the key axis at any opset.
      {"opset11_softmax_axis_3", With([](Spec& s) {
         s.opset = 11;
         s.softmax_axis = 3;
       })},
      // Masks that are not causal: an explicit attn_mask input, or no fusion.
      {"anticausal_buffer", With([](Spec& s) { s.mask = Mask::kAntiCausal; }), 1, "explicit",
       "mask differs from causal at T=2 row 0 col 1"},
      {"buffer_flipped_beyond_row_7", With([](Spec& s) { s.mask = Mask::kFlippedBuffer; }), 1, "explicit",
       "mask differs from causal at T=16 row 9 col 3"},
      // Causal OR'ed with a bool key padding input: proven as causal+padding.
      {"padding_from_input", With([](Spec& s) { s.mask = Mask::kPaddingInput; }), 1, "causal+padding", ""},
      // A finite fill: the explicit mask's fully hidden rows give the mean of V, as the Where does.
      {"anticausal_finite_fill", With([](Spec& s) {
         s.mask = Mask::kAntiCausal;
         s.fill = -1e4f;
       }), 1, "explicit", "mask differs from causal at T=2 row 0 col 1"},
      {"scale_from_input", With([](Spec& s) { s.scale_from_input = true; }), 0, "", "scale is not a constant"},
      {"softmax_on_query_axis", With([](Spec& s) { s.softmax_axis = -2; }), 0, "",
       "softmax axis is not the key axis"},
  };
}

using Optimised = OptimisedAttentionGraph;

Optimised Optimise(const Spec& spec, bool fuse) {
  Optimised r = OptimiseAttentionGraph(spec, fuse);
  EXPECT_TRUE(r.status.ok()) << r.status;
  return r;
}

class VariantTest : public ::testing::TestWithParam<Case> {};

TEST_P(VariantTest, FusedMatchesUnfused) {
  const Case& c = GetParam();
  Optimised unfused = Optimise(c.spec, false);
  Optimised fused = Optimise(c.spec, true);
  for (const FusionRecord& f : fused.report.fusions)
    std::cout << "  fused " << f.pattern << " mask=" << f.mask << " window=" << f.window << " heads=" << f.num_heads
              << "/" << f.kv_num_heads << " layout=" << f.q_layout << " past=" << f.has_past
              << " verify=" << f.verify_max_abs_error.value_or(-1) << "\n";
  for (const RejectedCandidate& r : fused.report.rejected) std::cout << "  rejected " << r.pattern << ": " << r.reason << "\n";

  EXPECT_EQ(CountOps(*fused.graph, "MultiHeadAttention"), c.fused);
  EXPECT_EQ(CountOps(*fused.graph, "Softmax"), 1 - c.fused);
  if (c.fused == 1) {
    ASSERT_EQ(fused.report.fusions.size(), 1u);
    const FusionRecord& f = fused.report.fusions[0];
    EXPECT_EQ(f.mask, c.mask_kind);
    EXPECT_EQ(f.causal, absl::StartsWith(c.mask_kind, "causal") || absl::StartsWith(c.mask_kind, "window"));
    EXPECT_EQ(f.window, c.window);
    EXPECT_EQ(f.has_past, c.spec.past);
    EXPECT_EQ(f.head_dim, c.spec.head_dim);
    if (c.kv_heads > 0) EXPECT_EQ(f.kv_num_heads, c.kv_heads);
    EXPECT_FALSE(f.undone);
    ASSERT_TRUE(f.verify_max_abs_error.has_value());
    EXPECT_LE(*f.verify_max_abs_error, 1e-5);
  }
  if (!c.reason.empty()) {
    bool found = false;
    for (const RejectedCandidate& r : fused.report.rejected) found |= absl::StrContains(r.reason, c.reason);
    EXPECT_TRUE(found) << "no rejection says '" << c.reason << "'";
  } else {
    EXPECT_TRUE(fused.report.rejected.empty());
  }

  // Sequence lengths (and past lengths) other than the probes' and the verifier's.
  std::vector<std::pair<int64_t, int64_t>> sizes = {{7, 5}, {3, 2}, {1, 4}, {12, 3}};
  if (!c.sizes.empty()) sizes = c.sizes;
  for (auto [t, p] : sizes) {
    auto want = RunGraph(*unfused.graph, DefaultKernelRegistry(), AttentionGraphInputs(c.spec, t, p));
    auto got = RunGraph(*fused.graph, DefaultKernelRegistry(), AttentionGraphInputs(c.spec, t, p));
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(want->size(), got->size());
    for (size_t i = 0; i < want->size(); ++i) {
      ASSERT_EQ((*want)[i].shape(), (*got)[i].shape());
      const double err = MaxAbsDifference((*want)[i], (*got)[i]);
      EXPECT_LE(err, 1e-5) << "output " << i << " at T=" << t << " past=" << p;
      if (i == 0) std::cout << "  fused_vs_unfused_max_abs " << c.name << " T=" << t << " past=" << p << " " << err << "\n";
    }
  }
}

std::vector<Case> AllCases() {
  std::vector<Case> cases = Cases();
  AddWindowCases(cases);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Attention, VariantTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// A mask that is causal at every probe size but not at T = 11 (written as
// 2T = 22, so no constant of it is 11): the proof accepts it, verify mode
// (which also runs at T = 11) must undo the fusion.
TEST(VerifyModeTest, UndoesAFusionThatDiffersFromTheOriginal) {
  Spec spec;
  spec.mask = Mask::kCausalExceptT11;
  auto graph = BuildAttentionGraph(spec);
  FusionReport report;
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = &report;
  context.verify_fusion = true;
  ASSERT_TRUE(DefaultPipeline(true)->Run(*graph, context).ok());
  EXPECT_EQ(CountOps(*graph, "MultiHeadAttention"), 0);
  EXPECT_EQ(CountOps(*graph, "Softmax"), 1);
  ASSERT_EQ(report.fusions.size(), 1u);
  EXPECT_TRUE(report.fusions[0].undone);
  ASSERT_TRUE(report.fusions[0].verify_max_abs_error.has_value());
  EXPECT_GT(*report.fusions[0].verify_max_abs_error, 1e-4);
  bool explained = false;
  for (const RejectedCandidate& r : report.rejected) explained |= absl::StrContains(r.reason, "fusion undone");
  EXPECT_TRUE(explained);

  // Without verify mode the proof alone fuses it (this is what verify mode is for).
  auto unverified = BuildAttentionGraph(spec);
  context.verify_fusion = false;
  FusionReport plain;
  context.report = &plain;
  ASSERT_TRUE(DefaultPipeline(true)->Run(*unverified, context).ok());
  EXPECT_EQ(CountOps(*unverified, "MultiHeadAttention"), 1);
}

TEST(FusionBudgetTest, MaxRewritesCapsTheFusions) {
  auto graph = BuildAttentionGraph(Spec{});
  FusionReport report;
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = &report;
  context.max_rewrites = 0;
  ASSERT_TRUE(DefaultPipeline(true)->Run(*graph, context).ok());
  EXPECT_EQ(CountOps(*graph, "MultiHeadAttention"), 0);
  EXPECT_TRUE(report.fusions.empty());
}

}  // namespace
}  // namespace attune::testing
