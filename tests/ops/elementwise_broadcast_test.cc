// Tests of the broadcasting helper (ops/common/broadcast.h) and the range splitter.
#include <atomic>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "ops/common/broadcast.h"
#include "ops/common/parallel.h"
#include "ops/common/team_monitor.h"

namespace attune {
namespace {

using Shape = std::vector<int64_t>;

Shape Broadcast(const Shape& a, const Shape& b) {
  auto s = BroadcastShapes(a, b);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Shape{-1};
}

TEST(BroadcastShapesTest, NumpyRules) {
  EXPECT_EQ(Broadcast({2, 3}, {3}), (Shape{2, 3}));
  EXPECT_EQ(Broadcast({3}, {2, 3}), (Shape{2, 3}));
  EXPECT_EQ(Broadcast({}, {2, 3}), (Shape{2, 3}));
  EXPECT_EQ(Broadcast({}, {}), (Shape{}));
  EXPECT_EQ(Broadcast({1}, {}), (Shape{1}));
  EXPECT_EQ(Broadcast({2, 1, 4}, {3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(Broadcast({1, 1}, {1}), (Shape{1, 1}));
  EXPECT_EQ(Broadcast({5, 1}, {1, 6}), (Shape{5, 6}));
}

TEST(BroadcastShapesTest, ZeroSizedDims) {
  EXPECT_EQ(Broadcast({0}, {1}), (Shape{0}));
  EXPECT_EQ(Broadcast({0, 3}, {1, 3}), (Shape{0, 3}));
  EXPECT_EQ(Broadcast({2, 0}, {}), (Shape{2, 0}));
  EXPECT_FALSE(BroadcastShapes(Shape{0}, Shape{2}).ok());
}

TEST(BroadcastShapesTest, IncompatibleShapesNameBoth) {
  auto s = BroadcastShapes(Shape{2, 3}, Shape{4});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), "shapes [2, 3] and [4] cannot broadcast");
}

TEST(BroadcastShapesTest, ManyShapes) {
  const Shape a{2, 1, 1}, b{3, 1}, c{4};
  auto s = BroadcastShapes({a, b, c});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, (Shape{2, 3, 4}));
  const Shape d{5};
  auto bad = BroadcastShapes({a, b, d, c});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "shapes [2, 1, 1], [3, 1], [5], [4] cannot broadcast");
}

TEST(BroadcastShapesTest, Unidirectional) {
  EXPECT_TRUE(IsUnidirectionalBroadcastable(Shape{3}, Shape{2, 3}));
  EXPECT_TRUE(IsUnidirectionalBroadcastable(Shape{}, Shape{2, 3}));
  EXPECT_TRUE(IsUnidirectionalBroadcastable(Shape{2, 1}, Shape{2, 3}));
  EXPECT_FALSE(IsUnidirectionalBroadcastable(Shape{2, 3}, Shape{3}));
  EXPECT_FALSE(IsUnidirectionalBroadcastable(Shape{1, 3}, Shape{3}));
  EXPECT_FALSE(IsUnidirectionalBroadcastable(Shape{4}, Shape{2, 3}));
}

// (offset a, offset b, out offset, count) for each run.
using RunSpan = std::tuple<int64_t, int64_t, int64_t, int64_t>;

std::vector<RunSpan> Runs(const BroadcastPlan& plan, int64_t begin, int64_t end) {
  std::vector<RunSpan> runs;
  plan.ForEachRun<2>(begin, end, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t n) {
    runs.emplace_back(off[0], off[1], o, n);
  });
  return runs;
}

TEST(BroadcastPlanTest, SameShapeIsOneRun) {
  const Shape s{2, 3, 4};
  auto plan = BroadcastPlan::Create({s, s});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kind(), BroadcastPlan::Kind::kSameShape);
  EXPECT_EQ(plan->inner_step(0), 1);
  EXPECT_EQ(plan->inner_step(1), 1);
  EXPECT_EQ(Runs(*plan, 0, 24), (std::vector<RunSpan>{{0, 0, 0, 24}}));
  EXPECT_EQ(Runs(*plan, 5, 9), (std::vector<RunSpan>{{5, 5, 5, 4}}));
}

TEST(BroadcastPlanTest, ScalarOperandRepeats) {
  const Shape a{2, 3}, b{};
  auto plan = BroadcastPlan::Create({a, b});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kind(), BroadcastPlan::Kind::kScalars);
  EXPECT_EQ(plan->inner_step(1), 0);
  EXPECT_EQ(Runs(*plan, 0, 6), (std::vector<RunSpan>{{0, 0, 0, 6}}));
}

TEST(BroadcastPlanTest, RowVector) {
  const Shape a{2, 3}, b{3};
  auto plan = BroadcastPlan::Create({a, b});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kind(), BroadcastPlan::Kind::kGeneral);
  EXPECT_EQ(plan->inner_step(0), 1);
  EXPECT_EQ(plan->inner_step(1), 1);
  EXPECT_EQ(Runs(*plan, 0, 6), (std::vector<RunSpan>{{0, 0, 0, 3}, {3, 0, 3, 3}}));
  // A range starting and ending mid-row.
  EXPECT_EQ(Runs(*plan, 2, 5), (std::vector<RunSpan>{{2, 2, 2, 1}, {3, 0, 3, 2}}));
}

TEST(BroadcastPlanTest, ColumnVector) {
  const Shape a{2, 3}, b{2, 1};
  auto plan = BroadcastPlan::Create({a, b});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->inner_step(1), 0);
  EXPECT_EQ(Runs(*plan, 0, 6), (std::vector<RunSpan>{{0, 0, 0, 3}, {3, 1, 3, 3}}));
}

TEST(BroadcastPlanTest, OuterProductAndMergedDims) {
  // [2,1,3,4] with [5,1,1]: out [2,5,3,4]; dims 3 and 4 merge into 12.
  const Shape a{2, 1, 3, 4}, b{5, 1, 1};
  auto plan = BroadcastPlan::Create({a, b});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->output_shape(), (Shape{2, 5, 3, 4}));
  const auto runs = Runs(*plan, 0, plan->num_elements());
  ASSERT_EQ(runs.size(), 10u);
  EXPECT_EQ(runs[0], (RunSpan{0, 0, 0, 12}));
  EXPECT_EQ(runs[1], (RunSpan{0, 1, 12, 12}));   // next b element, same a row
  EXPECT_EQ(runs[5], (RunSpan{12, 0, 60, 12}));  // next a batch, b wraps
  EXPECT_EQ(runs[9], (RunSpan{12, 4, 108, 12}));
}

TEST(BroadcastPlanTest, ScalarAndOnesOutputs) {
  const Shape a{}, b{1, 1};
  auto plan = BroadcastPlan::Create({a, b});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->output_shape(), (Shape{1, 1}));
  EXPECT_EQ(Runs(*plan, 0, 1), (std::vector<RunSpan>{{0, 0, 0, 1}}));
}

TEST(BroadcastPlanTest, EmptyOutputHasNoRuns) {
  const Shape a{0, 3}, b{3};
  auto plan = BroadcastPlan::Create({a, b});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->num_elements(), 0);
  EXPECT_TRUE(Runs(*plan, 0, 0).empty());
}

TEST(ParallelForRangeTest, CoversRangeOnceWithManyThreads) {
  ResetTeamMonitor();  // a stall seen by an earlier test on a busy machine would shrink the team
  std::vector<std::atomic<int>> hits(100000);
  std::atomic<int> calls{0};
  ParallelForRange(100000, 1000, 4, [&](int64_t b, int64_t e) {
    ++calls;
    for (int64_t i = b; i < e; ++i) ++hits[i];
  });
  EXPECT_EQ(calls.load(), 4);
  for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ParallelForRangeTest, SmallRangeIsOneCall) {
  int calls = 0;
  ParallelForRange(500, 1000, 4, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 500);
  });
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace attune
