// ScatterND, ScatterElements and Scatter: the spec's examples, every
// reduction, negative and out-of-range indices, empty updates, element types.
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Attributes Reduction(const char* name) { return Attrs({{"reduction", std::string(name)}}); }

Tensor Half(Shape shape, const std::vector<float>& values) {
  std::vector<Float16> h;
  for (float v : values) h.push_back(FloatToHalf(v));
  return Make<Float16>(std::move(shape), h);
}

std::vector<float> HalfValues(const Tensor& t) {
  std::vector<float> out;
  for (Float16 h : t.values<Float16>()) out.push_back(HalfToFloat(h));
  return out;
}

// An error that is InvalidArgument, one line, and names the node, the op and `part`.
::testing::AssertionResult Refused(const absl::StatusOr<std::vector<Tensor>>& result, const std::string& op,
                                   const std::string& part) {
  if (result.ok()) return ::testing::AssertionFailure() << "ran without error";
  const absl::Status& s = result.status();
  if (s.code() != absl::StatusCode::kInvalidArgument) return ::testing::AssertionFailure() << s;
  const std::string m(s.message());
  if (m.find('\n') != std::string::npos) return ::testing::AssertionFailure() << "several lines: " << m;
  for (const std::string& want : {op, std::string("'test_node'"), part})
    if (m.find(want) == std::string::npos) return ::testing::AssertionFailure() << "lacks \"" << want << "\": " << m;
  return ::testing::AssertionSuccess();
}

TEST(ScatterNDTest, ElementsOfARank1Tensor) {
  const Tensor out = Run1("ScatterND", 11, {},
                          {F32({8}, {1, 2, 3, 4, 5, 6, 7, 8}), I64({4, 1}, {4, 3, 1, 7}), F32({4}, {9, 10, 11, 12})});
  EXPECT_EQ(Values<float>(out), (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
}

TEST(ScatterNDTest, SlicesAndFullTuples) {
  // k = 1 of rank 3: whole [2, 2] slices; k = 3: single elements.
  const Tensor data = Iota({3, 2, 2});
  const Tensor slices = Run1("ScatterND", 13, {},
                             {data, I64({2, 1}, {2, 0}), F32({2, 2, 2}, {-1, -2, -3, -4, -5, -6, -7, -8})});
  EXPECT_EQ(Values<float>(slices), (std::vector<float>{-5, -6, -7, -8, 4, 5, 6, 7, -1, -2, -3, -4}));
  const Tensor elements = Run1("ScatterND", 13, {}, {data, I64({2, 3}, {1, 1, 0, 0, 0, 1}), F32({2}, {100, 200})});
  EXPECT_EQ(Values<float>(elements), (std::vector<float>{0, 200, 2, 3, 4, 5, 100, 7, 8, 9, 10, 11}));
  // Batched indices [2, 1, 2] address rows of a [2, 3] matrix by (row, col).
  const Tensor batched =
      Run1("ScatterND", 13, {}, {Iota({2, 3}), I64({2, 1, 2}, {0, 2, 1, 0}), F32({2, 1}, {-1, -2})});
  EXPECT_EQ(Values<float>(batched), (std::vector<float>{0, 1, -1, -2, 4, 5}));
}

TEST(ScatterNDTest, EveryReductionWithRepeatedIndices) {
  const Tensor data = F32({4}, {1, 2, 3, 4});
  const Tensor indices = I64({3, 1}, {1, 1, 3});
  const Tensor updates = F32({3}, {10, 5, -1});
  EXPECT_EQ(Values<float>(Run1("ScatterND", 16, Reduction("add"), {data, indices, updates})),
            (std::vector<float>{1, 17, 3, 3}));
  EXPECT_EQ(Values<float>(Run1("ScatterND", 16, Reduction("mul"), {data, indices, updates})),
            (std::vector<float>{1, 100, 3, -4}));
  EXPECT_EQ(Values<float>(Run1("ScatterND", 18, Reduction("max"), {data, indices, updates})),
            (std::vector<float>{1, 10, 3, 4}));
  EXPECT_EQ(Values<float>(Run1("ScatterND", 18, Reduction("min"), {data, indices, updates})),
            (std::vector<float>{1, 2, 3, -1}));
  EXPECT_EQ(Values<float>(Run1("ScatterND", 18, Reduction("none"), {data, I64({1, 1}, {0}), F32({1}, {9})})),
            (std::vector<float>{9, 2, 3, 4}));
}

TEST(ScatterNDTest, MaxAndMinPropagateNaN) {
  const Tensor data = F32({3}, {kNaN, 1, 2});
  const Tensor indices = I64({2, 1}, {0, 1});
  const Tensor updates = F32({2}, {5, kNaN});
  for (const char* r : {"max", "min"}) {
    const std::vector<float> got = Values<float>(Run1("ScatterND", 18, Reduction(r), {data, indices, updates}));
    ASSERT_EQ(got.size(), 3u);
    EXPECT_TRUE(std::isnan(got[0])) << r;
    EXPECT_TRUE(std::isnan(got[1])) << r;
    EXPECT_EQ(got[2], 2) << r;
  }
}

TEST(ScatterNDTest, NegativeIndicesCountFromTheEnd) {
  const Tensor out = Run1("ScatterND", 13, {}, {Iota({2, 3}), I64({2, 2}, {-1, -1, -2, 0}), F32({2}, {50, 60})});
  EXPECT_EQ(Values<float>(out), (std::vector<float>{60, 1, 2, 3, 4, 50}));
}

TEST(ScatterNDTest, OutOfRangeIndicesAreRefusedNamingTheNode) {
  const Tensor data = Iota({2, 3});
  auto high = RunOp("ScatterND", 13, {}, {data, I64({2, 2}, {0, 0, 1, 3}), F32({2}, {1, 2})});
  EXPECT_TRUE(Refused(high, "ScatterND", "indices[1, 1] = 3 is out of range for axis 1"));
  auto low = RunOp("ScatterND", 13, {}, {data, I64({1, 1}, {-3}), F32({1, 3}, {1, 2, 3})});
  EXPECT_TRUE(Refused(low, "ScatterND", "indices[0, 0] = -3"));
  EXPECT_TRUE(Refused(low, "ScatterND", "valid: -2 to 1"));
}

TEST(ScatterNDTest, BadShapesAndTypesAreRefused) {
  const Tensor data = Iota({2, 3});
  EXPECT_TRUE(Refused(RunOp("ScatterND", 13, {}, {data, I64({1, 1}, {0}), F32({1, 2}, {1, 2})}), "ScatterND",
                      "updates has shape [1, 2]"));
  EXPECT_TRUE(Refused(RunOp("ScatterND", 13, {}, {data, I64({1, 3}, {0, 0, 0}), F32({1}, {1})}), "ScatterND",
                      "address 3 axes"));
  EXPECT_TRUE(Refused(RunOp("ScatterND", 13, {}, {data, I32({1, 2}, {0, 0}), F32({1}, {1})}), "ScatterND",
                      "indices (input 1) has type int32"));
  EXPECT_TRUE(Refused(RunOp("ScatterND", 13, {}, {data, I64({1, 2}, {0, 0}), I64({1}, {1})}), "ScatterND",
                      "updates (input 2) has type int64"));
  EXPECT_TRUE(Refused(RunOp("ScatterND", 13, {}, {data, I64({1, 2}, {0, 0})}), "ScatterND", "input 2"));
}

TEST(ScatterNDTest, ReductionsNeedTheirOpset) {
  const std::vector<Tensor> in = {F32({2}, {1, 2}), I64({1, 1}, {0}), F32({1}, {5})};
  EXPECT_TRUE(Refused(RunOp("ScatterND", 13, Reduction("add"), in), "ScatterND", "needs opset 16"));
  EXPECT_TRUE(Refused(RunOp("ScatterND", 16, Reduction("max"), in), "ScatterND", "needs opset 18"));
  EXPECT_TRUE(Refused(RunOp("ScatterND", 18, Reduction("sum"), in), "ScatterND", "reduction 'sum'"));
  EXPECT_TRUE(RunOp("ScatterND", 13, Reduction("none"), in).ok());
}

TEST(ScatterNDTest, DuplicateIndicesWithoutReductionKeepOneOfTheUpdates) {
  // ONNX leaves the result undefined; it must be one of the updates, never a crash.
  const Tensor out = Run1("ScatterND", 13, {}, {F32({3}, {0, 0, 0}), I64({3, 1}, {1, 1, 1}), F32({3}, {7, 8, 9})});
  const std::vector<float> got = Values<float>(out);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(got[1] == 7 || got[1] == 8 || got[1] == 9) << got[1];
  EXPECT_EQ(got[0], 0);
  EXPECT_EQ(got[2], 0);
}

TEST(ScatterNDTest, EmptyUpdatesCopyData) {
  const Tensor data = Iota({2, 3});
  const Tensor out = Run1("ScatterND", 13, {}, {data, I64({0, 1}, {}), F32({0, 3}, {})});
  EXPECT_EQ(out.shape(), data.shape());
  EXPECT_EQ(Values<float>(out), Values<float>(data));
  // Empty data and empty updates: an empty output of data's shape.
  const Tensor empty = Run1("ScatterND", 13, {}, {F32({0, 3}, {}), I64({0, 1}, {}), F32({0, 3}, {})});
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
}

TEST(ScatterNDTest, OtherElementTypes) {
  const Tensor half = Run1("ScatterND", 16, Reduction("add"),
                           {Half({3}, {1, 2, 3}), I64({2, 1}, {2, 2}), Half({2}, {0.5f, 0.25f})});
  EXPECT_EQ(half.type(), ElementType::kFloat16);
  EXPECT_EQ(HalfValues(half), (std::vector<float>{1, 2, 3.75f}));
  const Tensor i64 = Run1("ScatterND", 16, Reduction("mul"),
                          {I64({2}, {3, int64_t{1} << 40}), I64({1, 1}, {1}), I64({1}, {4})});
  EXPECT_EQ(Values<int64_t>(i64), (std::vector<int64_t>{3, int64_t{1} << 42}));
  const Tensor i32 = Run1("ScatterND", 18, Reduction("min"), {I32({2}, {3, 5}), I64({1, 1}, {1}), I32({1}, {-4})});
  EXPECT_EQ(Values<int32_t>(i32), (std::vector<int32_t>{3, -4}));
  const Tensor b = Run1("ScatterND", 13, {}, {Make<bool>({3}, {false, false, true}), I64({2, 1}, {0, 2}),
                                              Make<bool>({2}, {true, false})});
  EXPECT_EQ(Values<bool>(b), (std::vector<bool>{true, false, false}));
  // numpy's meaning on bool: add is "or", mul is "and".
  const Tensor b_add = Run1("ScatterND", 16, Reduction("add"), {Make<bool>({2}, {false, true}), I64({2, 1}, {0, 1}),
                                                                Make<bool>({2}, {true, false})});
  EXPECT_EQ(Values<bool>(b_add), (std::vector<bool>{true, true}));
  const Tensor b_mul = Run1("ScatterND", 16, Reduction("mul"), {Make<bool>({2}, {false, true}), I64({2, 1}, {0, 1}),
                                                                Make<bool>({2}, {true, false})});
  EXPECT_EQ(Values<bool>(b_mul), (std::vector<bool>{false, false}));
}

TEST(ScatterElementsTest, AxisZeroAndOne) {
  // The spec's two examples.
  const Tensor out0 = Run1("ScatterElements", 11, {},
                           {F32({3, 3}, std::vector<float>(9, 0)), I64({2, 3}, {1, 0, 2, 0, 2, 1}),
                            F32({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f})});
  EXPECT_EQ(Values<float>(out0), (std::vector<float>{2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f}));
  for (int64_t axis : {1, -1}) {
    const Tensor out1 = Run1("ScatterElements", 13, Attrs({{"axis", axis}}),
                             {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, 3}), F32({1, 2}, {1.1f, 2.1f})});
    EXPECT_EQ(Values<float>(out1), (std::vector<float>{1, 1.1f, 3, 2.1f, 5})) << axis;
  }
}

TEST(ScatterElementsTest, IndicesSmallerThanDataOutsideTheAxis) {
  // indices [1, 2] into data [2, 3] on axis 0: only the first two columns move.
  const Tensor out =
      Run1("ScatterElements", 13, {}, {Iota({2, 3}), I32({1, 2}, {1, -2}), F32({1, 2}, {-1, -2})});
  EXPECT_EQ(Values<float>(out), (std::vector<float>{0, -2, 2, -1, 4, 5}));
}

TEST(ScatterElementsTest, EveryReduction) {
  const Tensor data = F32({1, 4}, {1, 2, 3, 4});
  const Tensor indices = I64({1, 3}, {1, 1, -1});
  const Tensor updates = F32({1, 3}, {10, 5, -1});
  const Attributes axis1 = Attrs({{"axis", int64_t{1}}});
  auto with = [&](const char* r) {
    Attributes a = axis1;
    a.Set("reduction", std::string(r));
    return a;
  };
  EXPECT_EQ(Values<float>(Run1("ScatterElements", 16, with("add"), {data, indices, updates})),
            (std::vector<float>{1, 17, 3, 3}));
  EXPECT_EQ(Values<float>(Run1("ScatterElements", 16, with("mul"), {data, indices, updates})),
            (std::vector<float>{1, 100, 3, -4}));
  EXPECT_EQ(Values<float>(Run1("ScatterElements", 18, with("max"), {data, indices, updates})),
            (std::vector<float>{1, 10, 3, 4}));
  EXPECT_EQ(Values<float>(Run1("ScatterElements", 18, with("min"), {data, indices, updates})),
            (std::vector<float>{1, 2, 3, -1}));
  EXPECT_TRUE(Refused(RunOp("ScatterElements", 17, with("min"), {data, indices, updates}), "ScatterElements",
                      "needs opset 18"));
}

TEST(ScatterElementsTest, OutOfRangeIndicesAndBadAxisAreRefused) {
  const Tensor data = Iota({2, 3});
  auto high = RunOp("ScatterElements", 13, Attrs({{"axis", int64_t{1}}}),
                    {data, I64({2, 2}, {0, 1, 2, 3}), F32({2, 2}, {1, 2, 3, 4})});
  EXPECT_TRUE(Refused(high, "ScatterElements", "indices[1, 1] = 3 is out of range for axis 1 of data [2, 3]"));
  auto low = RunOp("ScatterElements", 13, {}, {data, I32({1, 1}, {-3}), F32({1, 1}, {1})});
  EXPECT_TRUE(Refused(low, "ScatterElements", "indices[0, 0] = -3 is out of range for axis 0"));
  auto axis = RunOp("ScatterElements", 13, Attrs({{"axis", int64_t{2}}}), {data, I64({1, 1}, {0}), F32({1, 1}, {1})});
  EXPECT_TRUE(Refused(axis, "ScatterElements", "axis 2"));
  auto too_wide = RunOp("ScatterElements", 13, {}, {data, I64({1, 4}, {0, 0, 0, 0}), F32({1, 4}, {1, 2, 3, 4})});
  EXPECT_TRUE(Refused(too_wide, "ScatterElements", "do not fit data"));
  auto mismatch = RunOp("ScatterElements", 13, {}, {data, I64({1, 2}, {0, 0}), F32({2, 1}, {1, 2})});
  EXPECT_TRUE(Refused(mismatch, "ScatterElements", "must have the shape of indices"));
}

TEST(ScatterElementsTest, DuplicatesEmptyUpdatesAndTypes) {
  const Tensor dup = Run1("ScatterElements", 13, {}, {F32({2}, {0, 0}), I64({3}, {1, 1, 1}), F32({3}, {7, 8, 9})});
  const std::vector<float> got = Values<float>(dup);
  EXPECT_EQ(got[0], 0);
  EXPECT_TRUE(got[1] == 7 || got[1] == 8 || got[1] == 9) << got[1];

  const Tensor data = Iota({2, 3});
  const Tensor empty = Run1("ScatterElements", 13, {}, {data, I64({0, 3}, {}), F32({0, 3}, {})});
  EXPECT_EQ(Values<float>(empty), Values<float>(data));

  const Tensor half = Run1("ScatterElements", 18, Reduction("max"),
                           {Half({2, 2}, {1, 2, 3, 4}), I64({1, 2}, {1, 0}), Half({1, 2}, {3.5f, 1})});
  EXPECT_EQ(HalfValues(half), (std::vector<float>{1, 2, 3.5f, 4}));
  const Tensor b = Run1("ScatterElements", 13, {}, {Make<bool>({3}, {true, true, true}), I32({1}, {1}),
                                                    Make<bool>({1}, {false})});
  EXPECT_EQ(Values<bool>(b), (std::vector<bool>{true, false, true}));
}

TEST(ScatterTest, OpsetNineAndTenAreScatterElements) {
  for (int opset : {9, 10}) {
    const Tensor out = Run1("Scatter", opset, Attrs({{"axis", int64_t{1}}}),
                            {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, 3}), F32({1, 2}, {1.1f, 2.1f})});
    EXPECT_EQ(Values<float>(out), (std::vector<float>{1, 1.1f, 3, 2.1f, 5})) << opset;
  }
  auto reduced = RunOp("Scatter", 10, Reduction("add"), {F32({2}, {1, 2}), I64({1}, {0}), F32({1}, {1})});
  EXPECT_TRUE(Refused(reduced, "Scatter", "needs opset 16"));
  // Scatter ends at opset 10 (ScatterElements replaces it).
  EXPECT_EQ(RunOp("Scatter", 11, {}, {F32({2}, {1, 2}), I64({1}, {0}), F32({1}, {1})}).status().code(),
            absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace attune::testing
