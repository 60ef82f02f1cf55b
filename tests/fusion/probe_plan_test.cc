// The sizes a mask proof binds the model's symbols to agree with each other:
// a minimum of lengths (torch's slices write min(past, past+seq)) takes the
// value of its arguments, never the size given to unrelated dims.
#include "engine/passes/attention/probe_plan.h"

#include "gtest/gtest.h"
#include "tests/common/graph_builder.h"

namespace attune::attention {
namespace {

TEST(ProbePlanTest, AMinimumOfLengthsFollowsItsArguments) {
  testing::GraphBuilder b;
  const Value* ids = b.Input("ids", ElementType::kInt64, testing::Dims({"batch", "seq"}));
  const Value* sliced = b.Input("sliced", ElementType::kInt64, testing::Dims({"seq", "min(past,past+seq)"}));
  const ProbeDims dims{Dim::Symbol("seq"), Dim::Symbol("past+seq"), std::nullopt};
  auto plan = PlanProbes(dims, {ids, sliced});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->past_symbol.value_or(""), "past");
  EXPECT_EQ(plan->other_symbols, (std::set<std::string>{"batch"}));
  for (const Probe& p : {Probe{1, 0}, Probe{3, 5}}) {
    const DimBinding binding = BindingFor(*plan, p, dims);
    EXPECT_EQ(binding.Evaluate((*sliced->shape())[1]), p.past) << p.Label();
    EXPECT_EQ(binding.Evaluate((*ids->shape())[0]), kOtherDimSize);
  }
}

}  // namespace
}  // namespace attune::attention
