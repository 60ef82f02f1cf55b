// Explicit masks that hide every key of some rows (a causal mask OR'ed with
// left padding from an input), with a -inf or a finite fill (finfo.min,
// -1e4, -1e9), written as Where(mask, fill, scores) or as an additive mask:
// the fused op must give what the unfused graph gives on those rows too
// (NaN for -inf, the mean of V for a Where with a finite fill, softmax(s + m)
// for a finite additive mask), on every attention backend and ISA variant.
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>

#include "engine/exec/plan.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "ops/attention/attention_backend.h"
#include "ops/common/cpu_features.h"
#include "ops/registry.h"
#include "tests/fusion/attention_graphs.h"
#include "tests/fusion/backend_runs.h"

namespace attune::testing {
namespace {

using Spec = AttentionGraphSpec;
using Mask = Spec::Mask;

struct Case {
  std::string name;
  Mask mask;
  float fill;
  std::string masked_rows;  // what the fusion must write
  std::string kind;         // the fused mask: causal+padding when the padding is proven, else explicit
  double tolerance = 1e-5;  // as every fusion test: fused within 1e-5 of unfused
};

std::vector<Case> Cases() {
  const float inf = std::numeric_limits<float>::infinity();
  const float finfo_min = -std::numeric_limits<float>::max();
  return {
      {"where_neginf", Mask::kPaddingInput, -inf, "nan", "causal+padding"},
      {"where_finfo_min", Mask::kPaddingInput, finfo_min, "uniform", "causal+padding"},
      {"where_neg1e4", Mask::kPaddingInput, -1e4f, "uniform", "causal+padding"},
      {"where_neg1e9", Mask::kPaddingInput, -1e9f, "uniform", "causal+padding"},
      {"additive_neginf", Mask::kPaddingAdditive, -inf, "nan", "causal+padding"},
      // s + finfo.min is finfo.min for every ordinary score: equal fills.
      {"additive_finfo_min", Mask::kPaddingAdditive, finfo_min, "uniform", "causal+padding"},
      // A row that sees no key holds s - 1e4 at its padded keys, softmax(s)
      // up to float's rounding of s - 1e4 (2^-10): no constant fill, so the
      // fused op computes those rows from the scores plus the fill.
      {"additive_neg1e4", Mask::kPaddingAdditive, -1e4f, "fills", "causal+padding"},
      {"additive_neg1e9", Mask::kPaddingAdditive, -1e9f, "fills", "causal+padding"},
  };
}

Spec SpecFor(const Case& c) {
  Spec s;
  s.mask = c.mask;
  s.fill = c.fill;
  s.pad_left = 3;  // batch 1: rows 0..2 see no key (causal, and keys 0..2 padded)
  s.context = 80;  // the causal buffer serves T = 70
  return s;
}

class MaskedRowsTest : public ::testing::TestWithParam<Case> {};

TEST_P(MaskedRowsTest, FusedMatchesUnfusedOnRowsThatSeeNoKey) {
  const Case& c = GetParam();
  const Spec spec = SpecFor(c);
  auto unfused = BuildAttentionGraph(spec);
  auto fused = BuildAttentionGraph(spec);
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  FusionReport report;
  context.report = &report;
  context.verify_fusion = true;
  ASSERT_TRUE(DefaultPipeline(false)->Run(*unfused, context).ok());
  FusionReport fused_report;
  context.report = &fused_report;
  ASSERT_TRUE(DefaultPipeline(true)->Run(*fused, context).ok());
  ASSERT_EQ(CountOps(*fused, "MultiHeadAttention"), 1);
  ASSERT_EQ(fused_report.fusions.size(), 1u);
  EXPECT_EQ(fused_report.fusions[0].mask, c.kind);
  EXPECT_EQ(fused_report.fusions[0].masked_rows, c.masked_rows);

  // T = 3 takes the decode path, 9 and 70 the query blocks.
  for (int64_t t : {3, 9, 70}) {
    const std::vector<Tensor> inputs = AttentionGraphInputs(spec, t, 0);
    auto want = RunWith(*unfused, inputs, {"default", AttentionBackend::kAuto, std::nullopt});
    ASSERT_TRUE(want.ok()) << want.status();
    if (std::isinf(c.fill)) {  // the rows that see no key are NaN unfused: they exist
      bool nan = false;
      const Tensor& y = (*want)[0];
      for (int64_t i = 0; i < y.num_elements(); ++i) nan = nan || std::isnan(y.data<float>()[i]);
      EXPECT_TRUE(nan) << "T=" << t;
    }
    for (const Backend& b : Backends()) {
      auto got = RunWith(*fused, inputs, b);
      ASSERT_TRUE(got.ok()) << b.name << ": " << got.status();
      int64_t nans = 0;
      const double err = MaxErrorNanAware((*want)[0], (*got)[0], &nans);
      EXPECT_LE(err, c.tolerance) << b.name << " at T=" << t;
      std::cout << "  fused_vs_unfused_max_abs " << c.name << " " << b.name << " T=" << t << " " << err
                << " (NaN in both: " << nans << ")\n";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fills, MaskedRowsTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace attune::testing
