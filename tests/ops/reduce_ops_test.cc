// Hand-checked cases for the Reduce* ops, ArgMax/ArgMin and CumSum.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

const float kInf = std::numeric_limits<float>::infinity();

// x = [[1, 2, 3], [4, 5, 6]]
Tensor X() { return F32({2, 3}, {1, 2, 3, 4, 5, 6}); }

TEST(Reduce, AxesAsInputFromOpset18) {
  Tensor y = Run1("ReduceMean", 18, {}, {X(), I64({1}, {1})});
  EXPECT_EQ(y.shape(), Shape({2, 1}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({2, 5}));
  y = Run1("ReduceMax", 18, Attrs({{"keepdims", int64_t{0}}}), {X(), I64({1}, {0})});
  EXPECT_EQ(y.shape(), Shape({3}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({4, 5, 6}));
  // No axes: everything.
  y = Run1("ReduceMin", 18, {}, {X()});
  EXPECT_EQ(y.shape(), Shape({1, 1}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({1}));
}

TEST(Reduce, AxesAsAttributeBeforeTheirOpset) {
  EXPECT_EQ(Values<float>(Run1("ReduceMean", 17, Attrs({{"axes", std::vector<int64_t>{-1}}}), {X()})),
            std::vector<float>({2, 5}));
  EXPECT_EQ(Values<float>(Run1("ReduceSum", 11, Attrs({{"axes", std::vector<int64_t>{0}}}), {X()})),
            std::vector<float>({5, 7, 9}));
  // ReduceSum moved axes to an input already at 13.
  EXPECT_EQ(Values<float>(Run1("ReduceSum", 13, {}, {X(), I64({1}, {0})})), std::vector<float>({5, 7, 9}));
  EXPECT_FALSE(RunOp("ReduceMean", 18, Attrs({{"axes", std::vector<int64_t>{0}}}), {X()}).ok());
}

TEST(Reduce, EveryKind) {
  auto one = [](const char* op) {
    return Values<float>(Run1(op, 18, Attrs({{"keepdims", int64_t{0}}}), {X(), I64({1}, {1})}));
  };
  EXPECT_EQ(one("ReduceSum"), std::vector<float>({6, 15}));
  EXPECT_EQ(one("ReduceProd"), std::vector<float>({6, 120}));
  EXPECT_EQ(one("ReduceSumSquare"), std::vector<float>({14, 77}));
  EXPECT_EQ(one("ReduceL1"), std::vector<float>({6, 15}));
  auto l2 = one("ReduceL2");
  EXPECT_NEAR(l2[0], std::sqrt(14.0f), 1e-6);
  EXPECT_NEAR(l2[1], std::sqrt(77.0f), 1e-5);
  auto log_sum = one("ReduceLogSum");
  EXPECT_NEAR(log_sum[0], std::log(6.0f), 1e-6);
  auto lse = one("ReduceLogSumExp");
  EXPECT_NEAR(lse[0], std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)), 1e-5);
  EXPECT_NEAR(lse[1], std::log(std::exp(4.0) + std::exp(5.0) + std::exp(6.0)), 1e-5);
}

TEST(Reduce, LogSumExpIsStableForLargeValues) {
  Tensor y = Run1("ReduceLogSumExp", 18, {}, {F32({2}, {1000, 1000}), I64({1}, {0})});
  EXPECT_NEAR(y.data<float>()[0], 1000 + std::log(2.0f), 1e-3);
  y = Run1("ReduceLogSumExp", 18, {}, {F32({2}, {-kInf, -kInf})});
  EXPECT_EQ(y.data<float>()[0], -kInf);
}

TEST(Reduce, NoopWithEmptyAxesKeepsPerElementSteps) {
  Attributes noop = Attrs({{"noop_with_empty_axes", int64_t{1}}});
  Tensor x = F32({2}, {-3, 4});
  EXPECT_EQ(Values<float>(Run1("ReduceSum", 13, noop, {x})), std::vector<float>({-3, 4}));
  EXPECT_EQ(Values<float>(Run1("ReduceSum", 13, noop, {x, I64({0}, {})})), std::vector<float>({-3, 4}));
  EXPECT_EQ(Values<float>(Run1("ReduceL2", 18, noop, {x})), std::vector<float>({3, 4}));
  EXPECT_EQ(Values<float>(Run1("ReduceSumSquare", 18, noop, {x})), std::vector<float>({9, 16}));
  // Without the flag an empty axes list reduces everything.
  EXPECT_EQ(Values<float>(Run1("ReduceSum", 13, {}, {x, I64({0}, {})})), std::vector<float>({1}));
}

TEST(Reduce, EmptySetRules) {
  Tensor empty = F32({2, 0}, {});
  auto reduce_axis1 = [&](const char* op) { return Values<float>(Run1(op, 18, {}, {empty, I64({1}, {1})})); };
  EXPECT_EQ(reduce_axis1("ReduceSum"), std::vector<float>({0, 0}));
  EXPECT_EQ(reduce_axis1("ReduceProd"), std::vector<float>({1, 1}));
  EXPECT_EQ(reduce_axis1("ReduceMax"), std::vector<float>({-kInf, -kInf}));
  EXPECT_EQ(reduce_axis1("ReduceMin"), std::vector<float>({kInf, kInf}));
  EXPECT_EQ(reduce_axis1("ReduceLogSumExp"), std::vector<float>({-kInf, -kInf}));
  EXPECT_EQ(reduce_axis1("ReduceL2"), std::vector<float>({0, 0}));
  EXPECT_TRUE(std::isnan(reduce_axis1("ReduceMean")[0]));
  // Integers without infinity use their extreme values.
  Tensor empty_i = Make<int32_t>({0}, {});
  EXPECT_EQ(Run1("ReduceMax", 18, {}, {empty_i}).data<int32_t>()[0], std::numeric_limits<int32_t>::lowest());
  EXPECT_EQ(Run1("ReduceMin", 18, {}, {empty_i}).data<int32_t>()[0], std::numeric_limits<int32_t>::max());
  // A kept zero-sized dim gives an empty output.
  EXPECT_EQ(Run1("ReduceSum", 13, {}, {F32({0, 3}, {}), I64({1}, {1})}).shape(), Shape({0, 1}));
}

TEST(Reduce, MiddleAndAlternatingAxes) {
  // x[i][j][k] = 12i + 4j + k over [2, 3, 4].
  Tensor x = Iota({2, 3, 4});
  EXPECT_EQ(Values<float>(Run1("ReduceSum", 13, Attrs({{"keepdims", int64_t{0}}}), {x, I64({1}, {1})})),
            std::vector<float>({12, 15, 18, 21, 48, 51, 54, 57}));
  EXPECT_EQ(Values<float>(Run1("ReduceSum", 13, Attrs({{"keepdims", int64_t{0}}}), {x, I64({2}, {0, 2})})),
            std::vector<float>({60, 92, 124}));
  EXPECT_EQ(Values<float>(Run1("ReduceMax", 18, Attrs({{"keepdims", int64_t{0}}}), {x, I64({2}, {2, 0})})),
            std::vector<float>({15, 19, 23}));
}

TEST(Reduce, LongRowsAndColumnsAgainstClosedForms) {
  // Sum of 0..n-1 over a long contiguous row and down a long column.
  const int64_t n = 1001;
  Tensor row = Iota({1, n});
  EXPECT_EQ(Run1("ReduceSum", 13, {}, {row, I64({1}, {1})}).data<float>()[0], n * (n - 1) / 2.0f);
  Tensor col = Iota({n, 3});
  Tensor y = Run1("ReduceSum", 13, {}, {col, I64({1}, {0})});
  EXPECT_EQ(Values<float>(y), std::vector<float>({3.0f * n * (n - 1) / 2, 3.0f * n * (n - 1) / 2 + n,
                                                  3.0f * n * (n - 1) / 2 + 2 * n}));
  EXPECT_EQ(Run1("ReduceMax", 18, {}, {row, I64({1}, {-1})}).data<float>()[0], n - 1.0f);
}

TEST(Reduce, IntegerAndHalfTypes) {
  Tensor i = Make<int64_t>({2, 2}, {7, -2, 3, 4});
  EXPECT_EQ(Values<int64_t>(Run1("ReduceSum", 13, {}, {i, I64({1}, {1})})), std::vector<int64_t>({5, 7}));
  EXPECT_EQ(Values<int64_t>(Run1("ReduceMean", 18, {}, {i, I64({1}, {1})})), std::vector<int64_t>({2, 3}));
  EXPECT_EQ(Values<int64_t>(Run1("ReduceL1", 18, {}, {i, I64({1}, {1})})), std::vector<int64_t>({9, 7}));
  EXPECT_EQ(Values<int32_t>(Run1("ReduceProd", 18, {}, {I32({3}, {2, -3, 4})})), std::vector<int32_t>({-24}));
  std::vector<Float16> h = {FloatToHalf(1.5f), FloatToHalf(2.5f)};
  Tensor y = Run1("ReduceSum", 13, {}, {Make<Float16>({2}, h)});
  EXPECT_EQ(y.type(), ElementType::kFloat16);
  EXPECT_EQ(HalfToFloat(y.data<Float16>()[0]), 4.0f);
  Tensor d = Run1("ReduceMean", 18, {}, {Make<double>({3}, {1, 2, 4})});
  EXPECT_DOUBLE_EQ(d.data<double>()[0], 7.0 / 3.0);
  // Bool max/min from opset 20 only.
  Tensor b = Make<bool>({3}, {false, true, false});
  EXPECT_EQ(Values<bool>(Run1("ReduceMax", 20, {}, {b})), std::vector<bool>({true}));
  EXPECT_EQ(Values<bool>(Run1("ReduceMin", 20, {}, {b})), std::vector<bool>({false}));
  EXPECT_FALSE(RunOp("ReduceMax", 18, {}, {b}).ok());
  EXPECT_FALSE(RunOp("ReduceSum", 13, {}, {b}).ok());
}

TEST(Reduce, RejectsBadAxes) {
  EXPECT_EQ(RunOp("ReduceSum", 13, {}, {X(), I64({1}, {2})}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(RunOp("ReduceSum", 13, {}, {X(), I64({2}, {1, -1})}).ok());
  EXPECT_FALSE(RunOp("ReduceSum", 13, {}, {X(), I32({1}, {1})}).ok());  // axes must be int64
  EXPECT_FALSE(RunOp("ReduceMean", 17, Attrs({{"axes", std::vector<int64_t>{-3}}}), {X()}).ok());
}

TEST(ArgMax, FirstOrLastIndexAndKeepdims) {
  Tensor x = F32({2, 3}, {1, 3, 3, 5, 0, 5});
  Tensor y = Run1("ArgMax", 13, Attrs({{"axis", int64_t{1}}}), {x});
  EXPECT_EQ(y.shape(), Shape({2, 1}));
  EXPECT_EQ(Values<int64_t>(y), std::vector<int64_t>({1, 0}));
  y = Run1("ArgMax", 13, Attrs({{"axis", int64_t{-1}}, {"select_last_index", int64_t{1}}, {"keepdims", int64_t{0}}}),
           {x});
  EXPECT_EQ(y.shape(), Shape({2}));
  EXPECT_EQ(Values<int64_t>(y), std::vector<int64_t>({2, 2}));
  EXPECT_EQ(Values<int64_t>(Run1("ArgMin", 13, {}, {x})), std::vector<int64_t>({0, 1, 0}));
  EXPECT_EQ(Values<int64_t>(Run1("ArgMin", 13, Attrs({{"axis", int64_t{1}}}), {Make<int32_t>({1, 3}, {4, -1, -1})})),
            std::vector<int64_t>({1}));
  EXPECT_FALSE(RunOp("ArgMax", 13, Attrs({{"axis", int64_t{2}}}), {x}).ok());
  EXPECT_FALSE(RunOp("ArgMax", 13, Attrs({{"axis", int64_t{1}}}), {F32({2, 0}, {})}).ok());
}

TEST(CumSum, ExclusiveReverseAndAxisInput) {
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(Values<float>(Run1("CumSum", 14, {}, {x, I32({}, {1})})), std::vector<float>({1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(Values<float>(Run1("CumSum", 14, {}, {x, I64({}, {0})})), std::vector<float>({1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(Values<float>(Run1("CumSum", 14, Attrs({{"exclusive", int64_t{1}}}), {x, I64({}, {-1})})),
            std::vector<float>({0, 1, 3, 0, 4, 9}));
  EXPECT_EQ(Values<float>(Run1("CumSum", 14, Attrs({{"reverse", int64_t{1}}}), {x, I64({}, {1})})),
            std::vector<float>({6, 5, 3, 15, 11, 6}));
  EXPECT_EQ(Values<float>(Run1("CumSum", 14, Attrs({{"reverse", int64_t{1}}, {"exclusive", int64_t{1}}}),
                               {x, I64({}, {1})})),
            std::vector<float>({5, 3, 0, 11, 6, 0}));
  EXPECT_EQ(Values<int32_t>(Run1("CumSum", 14, {}, {I32({3}, {1, -2, 5}), I64({}, {0})})),
            std::vector<int32_t>({1, -1, 4}));
  EXPECT_FALSE(RunOp("CumSum", 14, {}, {x, I64({}, {2})}).ok());
  EXPECT_FALSE(RunOp("CumSum", 14, {}, {x, F32({}, {1})}).ok());
  EXPECT_FALSE(RunOp("CumSum", 14, {}, {x, I64({2}, {0, 1})}).ok());
  EXPECT_FALSE(RunOp("CumSum", 14, {}, {x}).ok());
}

}  // namespace
}  // namespace attune::testing
