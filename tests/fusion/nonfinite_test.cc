// NaN and infinity reach the fused attention's output where they reach the
// unfused subgraph's: a NaN V entry poisons its column in every row (P·V
// multiplies it by 0), a NaN or infinite Q or K entry the rows whose scores
// it makes NaN or +inf, on every backend and ISA variant.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/fusion/attention_graphs.h"
#include "tests/fusion/backend_runs.h"

namespace attune::testing {
namespace {

using Spec = AttentionGraphSpec;

struct Case {
  std::string name;
  Spec::Mask mask;
  // Changes the inputs (x, past_key, past_value) at T = 9, past = 4.
  std::function<void(std::vector<Tensor>&)> poison;
};

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Entry (b, h, j, d) of a [2, 4, past, 8] cache tensor.
float& At(Tensor& t, int64_t b, int64_t h, int64_t j, int64_t d) {
  const auto& s = t.shape();
  return t.data<float>()[((b * s[1] + h) * s[2] + j) * s[3] + d];
}

std::vector<Case> Cases() {
  std::vector<Case> out;
  for (Spec::Mask mask : {Spec::Mask::kWhereBuffer, Spec::Mask::kAddBuffer}) {
    const std::string m = mask == Spec::Mask::kWhereBuffer ? "where_" : "add_";
    out.push_back({m + "nan_in_x", mask, [](std::vector<Tensor>& in) { in[0].data<float>()[3 * 32 + 7] = kNaN; }});
    out.push_back({m + "nan_past_value", mask, [](std::vector<Tensor>& in) { At(in[2], 0, 1, 3, 5) = kNaN; }});
    // Key 5 of the cache is seen by every query: the rows give it weight > 0 and sum -inf.
    out.push_back({m + "inf_past_value_seen", mask, [](std::vector<Tensor>& in) { At(in[2], 1, 2, 0, 0) = -kInf; }});
    out.push_back({m + "nan_past_key", mask, [](std::vector<Tensor>& in) { At(in[1], 0, 0, 1, 2) = kNaN; }});
    out.push_back({m + "inf_past_key", mask, [](std::vector<Tensor>& in) { At(in[1], 1, 3, 2, 4) = kInf; }});
  }
  return out;
}

class NonFiniteTest : public ::testing::TestWithParam<Case> {};

TEST_P(NonFiniteTest, FusedGivesNaNWhereUnfusedDoes) {
  const Case& c = GetParam();
  Spec spec;
  spec.mask = c.mask;
  spec.past = true;
  spec.head_dim = 8;
  std::unique_ptr<Graph> unfused = BuildAttentionGraph(spec);
  std::unique_ptr<Graph> fused = BuildAttentionGraph(spec);
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  FusionReport report;
  context.report = &report;
  ASSERT_TRUE(DefaultPipeline(false)->Run(*unfused, context).ok());
  ASSERT_TRUE(DefaultPipeline(true)->Run(*fused, context).ok());
  ASSERT_EQ(CountOps(*fused, "MultiHeadAttention"), 1);

  std::vector<Tensor> inputs = AttentionGraphInputs(spec, 9, 4);
  c.poison(inputs);
  auto want = RunWith(*unfused, inputs, {"default", AttentionBackend::kAuto, std::nullopt});
  ASSERT_TRUE(want.ok()) << want.status();
  int64_t want_nans = 0;
  for (int64_t i = 0; i < (*want)[0].num_elements(); ++i) want_nans += std::isnan((*want)[0].data<float>()[i]);
  if (c.name.find("seen") == std::string::npos) EXPECT_GT(want_nans, 0) << "the poisoned input must reach the unfused output";
  for (const Backend& b : Backends()) {
    auto got = RunWith(*fused, inputs, b);
    ASSERT_TRUE(got.ok()) << b.name << ": " << got.status();
    int64_t nans = 0;
    EXPECT_LE(MaxErrorNanAware((*want)[0], (*got)[0], &nans), 1e-5) << b.name;
    EXPECT_EQ(nans, want_nans) << b.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Inputs, NonFiniteTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace attune::testing
