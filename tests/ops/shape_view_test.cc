// Hand-checked cases for the zero-copy and descriptive shape ops.
#include <gtest/gtest.h>

#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

TEST(Reshape, ZeroCopiesDimAndMinusOneInfers) {
  Tensor x = Iota({2, 3, 4});
  Tensor y = Run1("Reshape", 14, {}, {x, I64({2}, {0, -1})});
  EXPECT_EQ(y.shape(), Shape({2, 12}));
  EXPECT_EQ(y.raw_data(), x.raw_data());  // a view, no copy
}

TEST(Reshape, AllowZeroMakesZeroALiteralDim) {
  Tensor x = F32({0, 3}, {});
  Tensor y = Run1("Reshape", 14, Attrs({{"allowzero", int64_t{1}}}), {x, I64({3}, {3, 0, 5})});
  EXPECT_EQ(y.shape(), Shape({3, 0, 5}));
  // Without allowzero the 0 copies input dim 1 (3): 3*3*5 != 0 elements.
  EXPECT_FALSE(RunOp("Reshape", 14, {}, {x, I64({3}, {3, 0, 5})}).ok());
}

TEST(Reshape, RejectsBadShapes) {
  Tensor x = Iota({2, 3});
  auto bad_count = RunOp("Reshape", 14, {}, {x, I64({2}, {4, 2})});
  EXPECT_EQ(bad_count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(RunOp("Reshape", 14, {}, {x, I64({2}, {-1, -1})}).ok());
  EXPECT_FALSE(RunOp("Reshape", 14, {}, {x, I64({2}, {-1, 4})}).ok());            // 6 not divisible by 4
  EXPECT_FALSE(RunOp("Reshape", 14, {}, {x, I64({3}, {1, 1, 0})}).ok());          // dim 2 does not exist
  EXPECT_FALSE(RunOp("Reshape", 14, {}, {x, I64({2}, {-2, 3})}).ok());
  EXPECT_FALSE(RunOp("Reshape", 14, Attrs({{"allowzero", int64_t{1}}}), {x, I64({2}, {0, -1})}).ok());
  EXPECT_FALSE(RunOp("Reshape", 14, {}, {x, F32({2}, {3, 2})}).ok());             // shape must be int64
  EXPECT_FALSE(RunOp("Reshape", 14, {}, {x}).ok());                               // missing shape
  // Huge dims whose product overflows int64 are an error, not a wraparound.
  EXPECT_FALSE(RunOp("Reshape", 14, {}, {x, I64({3}, {int64_t{1} << 40, int64_t{1} << 40, 0})}).ok());
}

TEST(Reshape, Opset1TakesShapeAttribute) {
  Tensor y = Run1("Reshape", 1, Attrs({{"shape", std::vector<int64_t>{3, -1}}}), {Iota({2, 3})});
  EXPECT_EQ(y.shape(), Shape({3, 2}));
}

TEST(Flatten, AxisRangeIncludesRankAndNegatives) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_EQ(Run1("Flatten", 13, {}, {x}).shape(), Shape({2, 12}));
  EXPECT_EQ(Run1("Flatten", 13, Attrs({{"axis", int64_t{0}}}), {x}).shape(), Shape({1, 24}));
  EXPECT_EQ(Run1("Flatten", 13, Attrs({{"axis", int64_t{3}}}), {x}).shape(), Shape({24, 1}));
  EXPECT_EQ(Run1("Flatten", 13, Attrs({{"axis", int64_t{-1}}}), {x}).shape(), Shape({6, 4}));
  EXPECT_FALSE(RunOp("Flatten", 13, Attrs({{"axis", int64_t{4}}}), {x}).ok());
  EXPECT_FALSE(RunOp("Flatten", 13, Attrs({{"axis", int64_t{-4}}}), {x}).ok());
}

TEST(Squeeze, AxesInputAndAttribute) {
  Tensor x = Iota({1, 3, 1, 2});
  EXPECT_EQ(Run1("Squeeze", 13, {}, {x}).shape(), Shape({3, 2}));
  EXPECT_EQ(Run1("Squeeze", 13, {}, {x, I64({1}, {-2})}).shape(), Shape({1, 3, 2}));
  EXPECT_EQ(Run1("Squeeze", 11, Attrs({{"axes", std::vector<int64_t>{0}}}), {x}).shape(), Shape({3, 1, 2}));
  auto not_one = RunOp("Squeeze", 13, {}, {x, I64({1}, {1})});
  ASSERT_FALSE(not_one.ok());
  EXPECT_TRUE(MessageHas(not_one.status(), "axis 1")) << not_one.status();
  EXPECT_FALSE(RunOp("Squeeze", 13, {}, {x, I64({1}, {4})}).ok());
  EXPECT_FALSE(RunOp("Squeeze", 13, {}, {x, I64({2}, {0, -4})}).ok());  // the same axis twice
}

TEST(Unsqueeze, AxesRefersToOutputRank) {
  Tensor x = Iota({3, 4});
  EXPECT_EQ(Run1("Unsqueeze", 13, {}, {x, I64({2}, {0, 3})}).shape(), Shape({1, 3, 4, 1}));
  EXPECT_EQ(Run1("Unsqueeze", 13, {}, {x, I64({2}, {-1, 1})}).shape(), Shape({3, 1, 4, 1}));
  EXPECT_EQ(Run1("Unsqueeze", 11, Attrs({{"axes", std::vector<int64_t>{1}}}), {x}).shape(), Shape({3, 1, 4}));
  EXPECT_EQ(Run1("Unsqueeze", 13, {}, {Tensor::Scalar(5.0f), I64({1}, {0})}).shape(), Shape({1}));
  EXPECT_FALSE(RunOp("Unsqueeze", 13, {}, {x, I64({1}, {3})}).ok());
  EXPECT_FALSE(RunOp("Unsqueeze", 13, {}, {x, I64({2}, {1, 1})}).ok());
  EXPECT_FALSE(RunOp("Unsqueeze", 13, {}, {x}).ok());
}

TEST(Identity, SharesTheBuffer) {
  Tensor x = Iota({2});
  EXPECT_EQ(Run1("Identity", 13, {}, {x}).raw_data(), x.raw_data());
}

TEST(Dropout, InferenceIsIdentityWithAllTrueMask) {
  Tensor x = F32({2, 2}, {1, -2, 3, 4});
  auto out = RunOp("Dropout", 13, {}, {x, F32({}, {0.7f})}, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({1, -2, 3, 4}));
  ASSERT_EQ((*out)[1].type(), ElementType::kBool);
  EXPECT_EQ(Values<bool>((*out)[1]), std::vector<bool>({true, true, true, true}));
  // Training mode with ratio 0 keeps everything; with ratio > 0 it is random, so refused.
  EXPECT_TRUE(RunOp("Dropout", 13, {}, {x, F32({}, {0.0f}), Tensor::Scalar(true)}).ok());
  EXPECT_EQ(RunOp("Dropout", 13, {}, {x, F32({}, {0.5f}), Tensor::Scalar(true)}).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_FALSE(RunOp("Dropout", 13, {}, {x, F32({}, {1.5f})}).ok());
  // Dropout-7 typed its mask like the data.
  auto old = RunOp("Dropout", 7, {}, {x}, 2);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(Values<float>((*old)[1]), std::vector<float>({1, 1, 1, 1}));
}

TEST(Shape, StartAndEndClampAndCountFromTheBack) {
  Tensor x = F32({2, 3, 4, 5}, std::vector<float>(120));
  EXPECT_EQ(Values<int64_t>(Run1("Shape", 13, {}, {x})), std::vector<int64_t>({2, 3, 4, 5}));
  EXPECT_EQ(Values<int64_t>(Run1("Shape", 15, Attrs({{"start", int64_t{1}}, {"end", int64_t{-1}}}), {x})),
            std::vector<int64_t>({3, 4}));
  EXPECT_EQ(Values<int64_t>(Run1("Shape", 15, Attrs({{"start", int64_t{-10}}, {"end", int64_t{10}}}), {x})),
            std::vector<int64_t>({2, 3, 4, 5}));
  EXPECT_EQ(Run1("Shape", 15, Attrs({{"start", int64_t{3}}, {"end", int64_t{1}}}), {x}).shape(), Shape({0}));
}

TEST(Size, CountsElements) {
  Tensor y = Run1("Size", 13, {}, {F32({2, 0, 3}, {})});
  EXPECT_EQ(y.shape(), Shape({}));
  EXPECT_EQ(y.data<int64_t>()[0], 0);
  EXPECT_EQ(Run1("Size", 13, {}, {Iota({3, 4})}).data<int64_t>()[0], 12);
}

TEST(Constant, EachValueAttribute) {
  Tensor v = F32({2}, {1.5f, 2.5f});
  EXPECT_EQ(Values<float>(Run1("Constant", 13, Attrs({{"value", v}}), {})), std::vector<float>({1.5f, 2.5f}));
  Tensor f = Run1("Constant", 13, Attrs({{"value_float", 3.0f}}), {});
  EXPECT_EQ(f.shape(), Shape({}));
  EXPECT_EQ(f.data<float>()[0], 3.0f);
  EXPECT_EQ(Values<float>(Run1("Constant", 13, Attrs({{"value_floats", std::vector<float>{1, 2}}}), {})),
            std::vector<float>({1, 2}));
  Tensor i = Run1("Constant", 13, Attrs({{"value_int", int64_t{7}}}), {});
  EXPECT_EQ(i.type(), ElementType::kInt64);
  EXPECT_EQ(i.data<int64_t>()[0], 7);
  EXPECT_EQ(Values<int64_t>(Run1("Constant", 13, Attrs({{"value_ints", std::vector<int64_t>{4, 5}}}), {})),
            std::vector<int64_t>({4, 5}));
  EXPECT_EQ(RunOp("Constant", 13, Attrs({{"value_string", std::string("a")}}), {}).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(RunOp("Constant", 13, Attrs({{"sparse_value", v}}), {}).status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_FALSE(RunOp("Constant", 13, {}, {}).ok());
  EXPECT_FALSE(RunOp("Constant", 13, Attrs({{"value", v}, {"value_int", int64_t{1}}}), {}).ok());
}

}  // namespace
}  // namespace attune::testing
