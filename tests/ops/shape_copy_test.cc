// Hand-checked cases for the shape ops that copy data.
#include <gtest/gtest.h>

#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

TEST(Transpose, DefaultReversesDims) {
  Tensor y = Run1("Transpose", 13, {}, {Iota({2, 3})});
  EXPECT_EQ(y.shape(), Shape({3, 2}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({0, 3, 1, 4, 2, 5}));
}

TEST(Transpose, ThreeDimPermutation) {
  // x[i][j][k] = 12i + 4j + k; perm (1, 2, 0) gives y[j][k][i].
  Tensor y = Run1("Transpose", 13, Attrs({{"perm", std::vector<int64_t>{1, 2, 0}}}), {Iota({2, 3, 4})});
  EXPECT_EQ(y.shape(), Shape({3, 4, 2}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({0,  12, 1,  13, 2,  14, 3,  15, 4,  16, 5,  17,
                                                  6,  18, 7,  19, 8,  20, 9,  21, 10, 22, 11, 23}));
}

// Large enough to take the tiled path, with edges that are not tile multiples,
// and several element sizes; checked against the index formula.
TEST(Transpose, TiledPathsMatchIndexFormula) {
  const int64_t b = 3, h = 5, t = 67, d = 41;
  {
    Tensor y = Run1("Transpose", 13, Attrs({{"perm", std::vector<int64_t>{0, 1, 3, 2}}}), {Iota({b, h, t, d})});
    ASSERT_EQ(y.shape(), Shape({b, h, d, t}));
    const float* p = y.data<float>();
    for (int64_t i = 0; i < b * h; ++i)
      for (int64_t k = 0; k < d; ++k)
        for (int64_t j = 0; j < t; ++j) ASSERT_EQ(p[(i * d + k) * t + j], static_cast<float>((i * t + j) * d + k));
  }
  {
    // [B, T, H, D] -> [B, H, D, T] (the K^T layout).
    std::vector<int64_t> v(b * t * h * d);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i);
    Tensor y = Run1("Transpose", 13, Attrs({{"perm", std::vector<int64_t>{0, 2, 3, 1}}}), {I64({b, t, h, d}, v)});
    ASSERT_EQ(y.shape(), Shape({b, h, d, t}));
    const int64_t* p = y.data<int64_t>();
    for (int64_t i0 = 0; i0 < b; ++i0)
      for (int64_t i1 = 0; i1 < h; ++i1)
        for (int64_t i2 = 0; i2 < d; ++i2)
          for (int64_t i3 = 0; i3 < t; ++i3)
            ASSERT_EQ(p[((i0 * h + i1) * d + i2) * t + i3], ((i0 * t + i3) * h + i1) * d + i2);
  }
  {
    std::vector<uint8_t> v(40 * 70);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i * 7);
    Tensor y = Run1("Transpose", 13, {}, {Make<uint8_t>({40, 70}, v)});
    for (int64_t i = 0; i < 70; ++i)
      for (int64_t j = 0; j < 40; ++j) ASSERT_EQ(y.data<uint8_t>()[i * 40 + j], v[j * 70 + i]);
  }
}

TEST(Transpose, RejectsBadPerm) {
  EXPECT_FALSE(RunOp("Transpose", 13, Attrs({{"perm", std::vector<int64_t>{0, 0}}}), {Iota({2, 3})}).ok());
  EXPECT_FALSE(RunOp("Transpose", 13, Attrs({{"perm", std::vector<int64_t>{0, 1, 2}}}), {Iota({2, 3})}).ok());
  EXPECT_FALSE(RunOp("Transpose", 13, Attrs({{"perm", std::vector<int64_t>{0, 2}}}), {Iota({2, 3})}).ok());
}

TEST(Concat, NegativeAxisAndEmptyInputs) {
  Tensor a = F32({2, 1}, {1, 2}), b = F32({2, 2}, {3, 4, 5, 6}), e = F32({2, 0}, {});
  Tensor y = Run1("Concat", 13, Attrs({{"axis", int64_t{-1}}}), {a, e, b});
  EXPECT_EQ(y.shape(), Shape({2, 3}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({1, 3, 4, 2, 5, 6}));
  EXPECT_EQ(Values<float>(Run1("Concat", 13, Attrs({{"axis", int64_t{0}}}), {b, b})),
            std::vector<float>({3, 4, 5, 6, 3, 4, 5, 6}));
  EXPECT_FALSE(RunOp("Concat", 13, Attrs({{"axis", int64_t{0}}}), {a, b}).ok());          // dim 1 differs
  EXPECT_FALSE(RunOp("Concat", 13, Attrs({{"axis", int64_t{2}}}), {a, a}).ok());          // bad axis
  EXPECT_FALSE(RunOp("Concat", 13, Attrs({{"axis", int64_t{1}}}), {a, I64({2, 1}, {1, 2})}).ok());  // type
  EXPECT_FALSE(RunOp("Concat", 13, {}, {a, a}).ok());                                     // axis required
}

TEST(Split, SizesFromInputAttributeOrEqualParts) {
  Tensor x = F32({6}, {1, 2, 3, 4, 5, 6});
  auto out = RunOp("Split", 13, {}, {x, I64({2}, {2, 4})}, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({1, 2}));
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({3, 4, 5, 6}));
  out = RunOp("Split", 11, Attrs({{"split", std::vector<int64_t>{5, 1}}}), {x}, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({6}));
  out = RunOp("Split", 13, {}, {x}, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[2]), std::vector<float>({5, 6}));
  EXPECT_FALSE(RunOp("Split", 13, {}, {x}, 4).ok());                        // 6 is not divisible by 4
  EXPECT_FALSE(RunOp("Split", 13, {}, {x, I64({2}, {2, 3})}, 2).ok());      // sums to 5
  EXPECT_FALSE(RunOp("Split", 13, {}, {x, I64({2}, {7, -1})}, 2).ok());     // negative size
  EXPECT_FALSE(RunOp("Split", 13, {}, {x, I64({3}, {2, 2, 2})}, 2).ok());   // 3 sizes, 2 outputs
}

TEST(Split, Opset18NumOutputsMakesLastChunkSmaller) {
  Tensor x = Iota({2, 7});
  auto out = RunOp("Split", 18, Attrs({{"axis", int64_t{1}}, {"num_outputs", int64_t{3}}}), {x}, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), Shape({2, 3}));
  EXPECT_EQ((*out)[2].shape(), Shape({2, 1}));
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({3, 4, 5, 10, 11, 12}));
  EXPECT_EQ(Values<float>((*out)[2]), std::vector<float>({6, 13}));
  EXPECT_FALSE(RunOp("Split", 18, Attrs({{"num_outputs", int64_t{2}}}), {x}, 3).ok());
  EXPECT_FALSE(RunOp("Split", 18, Attrs({{"num_outputs", int64_t{2}}}), {x, I64({2}, {1, 1})}, 2).ok());
}

TEST(Slice, NegativeAndClampedStartsEndsAndSteps) {
  Tensor x = Iota({3, 4});  // rows 0..3, 4..7, 8..11
  // Rows from 1 to the end (end clamped), columns -3..-1.
  Tensor y = Run1("Slice", 13, {}, {x, I64({2}, {1, -3}), I64({2}, {100, -1})});
  EXPECT_EQ(y.shape(), Shape({2, 2}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({5, 6, 9, 10}));
  // Reverse every axis: step -1 from the end down to before index 0.
  y = Run1("Slice", 13, {}, {x, I64({2}, {-1, -1}), I64({2}, {INT64_MIN, INT64_MIN}), I64({2}, {0, 1}),
                              I64({2}, {-1, -2})});
  EXPECT_EQ(y.shape(), Shape({3, 2}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({11, 9, 7, 5, 3, 1}));
  // int32 indices, one axis given, step 3 larger than what is left.
  y = Run1("Slice", 13, {}, {x, I32({1}, {1}), I32({1}, {4}), I32({1}, {-1}), I32({1}, {3})});
  EXPECT_EQ(Values<float>(y), std::vector<float>({1, 5, 9}));
  // Start past the end gives an empty dim.
  EXPECT_EQ(Run1("Slice", 13, {}, {x, I64({1}, {5}), I64({1}, {10})}).shape(), Shape({0, 4}));
}

TEST(Slice, Opset1AttributesAndErrors) {
  Tensor x = Iota({3, 4});
  Tensor y = Run1("Slice", 9,
                  Attrs({{"starts", std::vector<int64_t>{1}}, {"ends", std::vector<int64_t>{3}},
                         {"axes", std::vector<int64_t>{1}}}),
                  {x});
  EXPECT_EQ(Values<float>(y), std::vector<float>({1, 2, 5, 6, 9, 10}));
  EXPECT_FALSE(RunOp("Slice", 13, {}, {x, I64({1}, {0}), I64({1}, {2}), I64({1}, {0}), I64({1}, {0})}).ok());  // step 0
  EXPECT_FALSE(RunOp("Slice", 13, {}, {x, I64({1}, {0}), I64({2}, {2, 2})}).ok());                // length mismatch
  EXPECT_FALSE(RunOp("Slice", 13, {}, {x, I64({2}, {0, 0}), I64({2}, {1, 1}), I64({2}, {1, -1})}).ok());  // repeated
  EXPECT_FALSE(RunOp("Slice", 13, {}, {x, F32({1}, {0}), F32({1}, {1})}).ok());                   // float indices
}

TEST(Gather, AxisAndNegativeIndices) {
  Tensor x = Iota({3, 2});
  Tensor y = Run1("Gather", 13, {}, {x, I64({2, 2}, {2, 0, -1, 1})});
  EXPECT_EQ(y.shape(), Shape({2, 2, 2}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({4, 5, 0, 1, 4, 5, 2, 3}));
  y = Run1("Gather", 13, Attrs({{"axis", int64_t{1}}}), {x, I32({}, {1})});
  EXPECT_EQ(y.shape(), Shape({3}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({1, 3, 5}));
}

TEST(Gather, OutOfRangeIndexIsNamed) {
  auto out = RunOp("Gather", 13, {}, {Iota({3, 2}), I64({3}, {0, 3, 1})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(out.status(), "index 3")) << out.status();
  EXPECT_FALSE(RunOp("Gather", 13, {}, {Iota({3, 2}), I64({1}, {-4})}).ok());
  EXPECT_FALSE(RunOp("Gather", 13, {}, {Iota({3, 2}), F32({1}, {0})}).ok());
  EXPECT_FALSE(RunOp("Gather", 13, Attrs({{"axis", int64_t{2}}}), {Iota({3, 2}), I64({1}, {0})}).ok());
}

TEST(GatherElements, PicksAlongAxis) {
  Tensor x = F32({2, 2}, {1, 2, 3, 4});
  Tensor y = Run1("GatherElements", 13, Attrs({{"axis", int64_t{1}}}), {x, I64({2, 2}, {0, 0, 1, 0})});
  EXPECT_EQ(Values<float>(y), std::vector<float>({1, 1, 4, 3}));
  y = Run1("GatherElements", 13, {}, {Iota({3, 3}), I64({2, 3}, {1, 2, 0, 2, 0, -3})});
  EXPECT_EQ(Values<float>(y), std::vector<float>({3, 7, 2, 6, 1, 2}));
  EXPECT_FALSE(RunOp("GatherElements", 13, {}, {x, I64({1, 2}, {2, 0})}).ok());        // out of range
  EXPECT_FALSE(RunOp("GatherElements", 13, {}, {x, I64({2}, {0, 0})}).ok());           // rank differs
  EXPECT_FALSE(RunOp("GatherElements", 13, {}, {x, I64({1, 3}, {0, 0, 0})}).ok());     // wider than data
}

TEST(Expand, BroadcastsBothWays) {
  Tensor y = Run1("Expand", 13, {}, {F32({3, 1}, {1, 2, 3}), I64({3}, {2, 1, 2})});
  EXPECT_EQ(y.shape(), Shape({2, 3, 2}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(Run1("Expand", 13, {}, {F32({1}, {7}), I64({2}, {2, 0})}).shape(), Shape({2, 0}));
  EXPECT_FALSE(RunOp("Expand", 13, {}, {F32({3}, {1, 2, 3}), I64({1}, {2})}).ok());
  auto huge = RunOp("Expand", 13, {}, {F32({1}, {1}), I64({2}, {int64_t{1} << 20, int64_t{1} << 20})}, 1, 1 << 20);
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(RunOp("Expand", 13, {}, {F32({1}, {1}), I64({3}, {int64_t{1} << 40, int64_t{1} << 40, 4})}).ok());
}

TEST(Tile, RepeatsEachAxis) {
  Tensor y = Run1("Tile", 13, {}, {F32({2, 2}, {1, 2, 3, 4}), I64({2}, {2, 3})});
  EXPECT_EQ(y.shape(), Shape({4, 6}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                                  1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  EXPECT_FALSE(RunOp("Tile", 13, {}, {F32({2}, {1, 2}), I64({2}, {1, 1})}).ok());
  EXPECT_FALSE(RunOp("Tile", 13, {}, {F32({2}, {1, 2}), I64({1}, {-1})}).ok());
  EXPECT_EQ(RunOp("Tile", 13, {}, {F32({2}, {1, 2}), I64({1}, {int64_t{1} << 40})}, 1, 1 << 20).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(Trilu, UpperAndLowerWithK) {
  Tensor x = Iota({3, 4});
  EXPECT_EQ(Values<float>(Run1("Trilu", 14, {}, {x})),
            std::vector<float>({0, 1, 2, 3, 0, 5, 6, 7, 0, 0, 10, 11}));
  EXPECT_EQ(Values<float>(Run1("Trilu", 14, Attrs({{"upper", int64_t{0}}}), {x, I64({}, {-1})})),
            std::vector<float>({0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0}));
  EXPECT_EQ(Values<float>(Run1("Trilu", 14, {}, {x, I64({}, {2})})),
            std::vector<float>({0, 0, 2, 3, 0, 0, 0, 7, 0, 0, 0, 0}));
  EXPECT_EQ(Values<float>(Run1("Trilu", 14, {}, {x, I64({}, {INT64_MIN})})), Values<float>(x));
  EXPECT_FALSE(RunOp("Trilu", 14, {}, {F32({3}, {1, 2, 3})}).ok());
}

TEST(ConstantOfShape, FillsWithValueType) {
  Tensor y = Run1("ConstantOfShape", 20, Attrs({{"value", I32({1}, {7})}}), {I64({2}, {2, 3})});
  EXPECT_EQ(y.type(), ElementType::kInt32);
  EXPECT_EQ(Values<int32_t>(y), std::vector<int32_t>(6, 7));
  Tensor z = Run1("ConstantOfShape", 9, {}, {I64({0}, {})});
  EXPECT_EQ(z.shape(), Shape({}));
  EXPECT_EQ(z.data<float>()[0], 0.0f);
  EXPECT_FALSE(RunOp("ConstantOfShape", 9, {}, {I64({1}, {-1})}).ok());
  EXPECT_EQ(RunOp("ConstantOfShape", 9, {}, {I64({2}, {int64_t{1} << 31, int64_t{1} << 31})}, 1, 1 << 20).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(Range, CountsAndTypes) {
  EXPECT_EQ(Values<float>(Run1("Range", 11, {}, {F32({}, {1}), F32({}, {2}), F32({}, {0.25f})})),
            std::vector<float>({1, 1.25f, 1.5f, 1.75f}));
  EXPECT_EQ(Values<int32_t>(Run1("Range", 11, {}, {I32({}, {10}), I32({}, {4}), I32({}, {-3})})),
            std::vector<int32_t>({10, 7}));
  EXPECT_EQ(Run1("Range", 11, {}, {I64({}, {5}), I64({}, {1}), I64({}, {2})}).shape(), Shape({0}));
  EXPECT_FALSE(RunOp("Range", 11, {}, {I64({}, {0}), I64({}, {5}), I64({}, {0})}).ok());
  EXPECT_FALSE(RunOp("Range", 11, {}, {I64({}, {0}), F32({}, {5}), I64({}, {1})}).ok());
  EXPECT_EQ(RunOp("Range", 11, {}, {I64({}, {INT64_MIN}), I64({}, {INT64_MAX}), I64({}, {1})}).status().code(),
            absl::StatusCode::kInvalidArgument);  // 2^64 elements: the count itself overflows
  EXPECT_EQ(RunOp("Range", 11, {}, {F32({}, {0}), F32({}, {1e12f}), F32({}, {1})}, 1, 1 << 20).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace attune::testing
