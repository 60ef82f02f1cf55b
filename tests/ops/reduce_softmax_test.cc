// Hand-checked cases for Softmax and LogSoftmax, old and new axis semantics.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

// softmax([1, 2, 3]) = [e^-2, e^-1, 1] / (e^-2 + e^-1 + 1)
const double kS = std::exp(-2.0) + std::exp(-1.0) + 1.0;
const std::vector<double> kSoft123 = {std::exp(-2.0) / kS, std::exp(-1.0) / kS, 1.0 / kS};

void ExpectNear(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    double got = t.type() == ElementType::kFloat32 ? t.data<float>()[i]
                 : t.type() == ElementType::kFloat64 ? t.data<double>()[i]
                                                     : HalfToFloat(t.data<Float16>()[i]);
    EXPECT_NEAR(got, want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
  }
}

TEST(Softmax, LastAxisRows) {
  Tensor y = Run1("Softmax", 13, {}, {F32({2, 3}, {1, 2, 3, 11, 12, 13})});
  ExpectNear(y, {kSoft123[0], kSoft123[1], kSoft123[2], kSoft123[0], kSoft123[1], kSoft123[2]});
}

TEST(Softmax, LargeInputsDoNotOverflow) {
  Tensor y = Run1("Softmax", 13, {}, {F32({3}, {10001, 10002, 10003})});
  ExpectNear(y, kSoft123);
  Tensor z = Run1("LogSoftmax", 13, {}, {F32({3}, {-10001, -10002, -10003})});
  ExpectNear(z, {std::log(kSoft123[2]), std::log(kSoft123[1]), std::log(kSoft123[0])}, 1e-5);
}

TEST(Softmax, MaskedEntriesBecomeZero) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor y = Run1("Softmax", 13, {}, {F32({4}, {1, -inf, 1, -inf})});
  ExpectNear(y, {0.5, 0, 0.5, 0});
  EXPECT_EQ(y.data<float>()[1], 0.0f);
}

TEST(Softmax, InnerAxisOpset13) {
  // Axis 0 of [3, 2]: each column is one softmax.
  Tensor y = Run1("Softmax", 13, Attrs({{"axis", int64_t{0}}}), {F32({3, 2}, {1, 0, 2, 0, 3, 0})});
  ExpectNear(y, {kSoft123[0], 1.0 / 3, kSoft123[1], 1.0 / 3, kSoft123[2], 1.0 / 3});
}

TEST(Softmax, Opset11CoercesTo2D) {
  // Axis 1 of [1, 2, 2] at opset 11 is one softmax over all four values; at 13 over pairs.
  Tensor x = F32({1, 2, 2}, {0, 0, 0, 0});
  ExpectNear(Run1("Softmax", 11, Attrs({{"axis", int64_t{1}}}), {x}), {0.25, 0.25, 0.25, 0.25});
  ExpectNear(Run1("Softmax", 13, Attrs({{"axis", int64_t{1}}}), {x}), {0.5, 0.5, 0.5, 0.5});
  // Default axis 1 before 13: rows of [2, 3] stay separate softmaxes.
  ExpectNear(Run1("LogSoftmax", 11, {}, {F32({1, 3}, {1, 2, 3})}),
             {std::log(kSoft123[0]), std::log(kSoft123[1]), std::log(kSoft123[2])}, 1e-5);
}

TEST(Softmax, LongRowsAcrossThreadsAndTypes) {
  // 257 columns (not a multiple of the 16 lanes), many rows: every row is softmax([0 .. 256]).
  const int64_t rows = 200, cols = 257;
  std::vector<float> v(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) v[i] = static_cast<float>(i % cols) / 64.0f;
  double sum = 0;
  for (int64_t j = 0; j < cols; ++j) sum += std::exp(j / 64.0);
  std::vector<double> want(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) want[i] = std::exp((i % cols) / 64.0) / sum;
  ExpectNear(Run1("Softmax", 13, {}, {F32({rows, cols}, v)}), want, 1e-5);
  std::vector<double> vd(v.begin(), v.end());
  ExpectNear(Run1("Softmax", 13, {}, {Make<double>({rows, cols}, vd)}), want, 1e-12);
  std::vector<Float16> vh(v.size());
  for (size_t i = 0; i < v.size(); ++i) vh[i] = FloatToHalf(v[i]);
  ExpectNear(Run1("Softmax", 13, {}, {Make<Float16>({rows, cols}, vh)}), want, 2e-3);
}

TEST(Softmax, RejectsBadAxisAndTypes) {
  EXPECT_EQ(RunOp("Softmax", 13, Attrs({{"axis", int64_t{2}}}), {F32({2, 2}, {1, 2, 3, 4})}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(RunOp("Softmax", 13, {}, {I32({2}, {1, 2})}).ok());
  EXPECT_FALSE(RunOp("LogSoftmax", 13, Attrs({{"axis", int64_t{-3}}}), {F32({2, 2}, {1, 2, 3, 4})}).ok());
}

}  // namespace
}  // namespace attune::testing
