// ONNX Gemm against Y = alpha·A'·B' + beta·C computed here in double.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/kernel_runner.h"
#include "tests/ops/matmul_test_util.h"

namespace attune::testing {
namespace {

struct GemmCase {
  int64_t m, k, n;
  bool trans_a, trans_b;
  float alpha, beta;
  std::vector<int64_t> c_shape;  // empty vector with has_c = false means no C
  bool has_c;
};

std::vector<double> NaiveGemm(const GemmCase& g, const std::vector<double>& a, const std::vector<double>& b,
                              const std::vector<double>& c) {
  std::vector<double> y(g.m * g.n);
  const int64_t c_rows = g.c_shape.size() == 2 ? g.c_shape[0] : 1;
  const int64_t c_cols = g.c_shape.empty() ? 1 : g.c_shape.back();
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        const double av = g.trans_a ? a[p * g.m + i] : a[i * g.k + p];
        const double bv = g.trans_b ? b[j * g.k + p] : b[p * g.n + j];
        sum += av * bv;
      }
      double v = static_cast<double>(g.alpha) * sum;
      if (g.has_c) v += static_cast<double>(g.beta) * c[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
      y[i * g.n + j] = v;
    }
  return y;
}

KernelCall GemmCall(const GemmCase& g, ElementType type, const std::vector<double>& a, const std::vector<double>& b,
                    const std::vector<double>& c) {
  KernelCall call;
  call.op_type = "Gemm";
  call.opset = 13;
  call.attributes.Set("alpha", g.alpha);
  call.attributes.Set("beta", g.beta);
  call.attributes.Set("transA", int64_t{g.trans_a});
  call.attributes.Set("transB", int64_t{g.trans_b});
  const std::vector<int64_t> a_shape = g.trans_a ? std::vector<int64_t>{g.k, g.m} : std::vector<int64_t>{g.m, g.k};
  const std::vector<int64_t> b_shape = g.trans_b ? std::vector<int64_t>{g.n, g.k} : std::vector<int64_t>{g.k, g.n};
  call.inputs = {MakeTensor(type, a_shape, a), MakeTensor(type, b_shape, b)};
  if (g.has_c) call.inputs.push_back(MakeTensor(type, g.c_shape, c));
  return call;
}

void CheckGemm(const GemmCase& g, ElementType type, std::vector<int> constants, uint64_t seed) {
  const bool integral = type == ElementType::kInt32 || type == ElementType::kInt64;
  auto values = [&](int64_t count, uint64_t s) {
    return integral ? RandomIntegers(count, s, 7) : Quantized(type, {count}, RandomValues(count, s));
  };
  const std::vector<double> a = values(g.m * g.k, seed), b = values(g.k * g.n, seed + 1),
                            c = values(std::max<int64_t>(1, Count(g.c_shape)), seed + 2);
  KernelCall call = GemmCall(g, type, a, b, c);
  call.constant_inputs = constants;
  auto out = RunKernel(call);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), (std::vector<int64_t>{g.m, g.n}));
  const std::vector<double> want = NaiveGemm(g, a, b, c), got = ToDoubles((*out)[0]);
  const double tol = type == ElementType::kFloat64 ? 1e-12 : integral ? 0 : 2e-6 * (g.k + 1);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << "at " << i;
}

std::vector<GemmCase> Cases() {
  std::vector<GemmCase> cases;
  const std::vector<std::pair<std::vector<int64_t>, bool>> c_shapes = {
      {{}, false}, {{}, true}, {{1}, true}, {{23}, true}, {{1, 23}, true}, {{19, 1}, true}, {{19, 23}, true}};
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (const auto& [c_shape, has_c] : c_shapes)
        cases.push_back({19, 37, 23, ta, tb, 1.0f, 1.0f, c_shape, has_c});
  cases.push_back({19, 37, 23, true, true, 0.5f, -2.0f, {23}, true});
  cases.push_back({19, 37, 23, false, true, 0.25f, 0.0f, {19, 23}, true});
  cases.push_back({1, 768, 100, false, true, 1.0f, 1.0f, {100}, true});
  cases.push_back({5, 1, 1, false, false, 3.0f, 0.5f, {5, 1}, true});
  return cases;
}

TEST(GemmTest, Float32AllLayouts) {
  uint64_t seed = 1;
  for (const GemmCase& g : Cases()) {
    for (const std::vector<int>& constants : {std::vector<int>{}, std::vector<int>{1}, std::vector<int>{1, 2}}) {
      SCOPED_TRACE(::testing::Message() << "transA " << g.trans_a << " transB " << g.trans_b << " alpha " << g.alpha
                                        << " beta " << g.beta << " C " << (g.has_c ? ShapeToString(g.c_shape) : "none")
                                        << " constants " << constants.size());
      CheckGemm(g, ElementType::kFloat32, constants, seed++);
    }
  }
}

TEST(GemmTest, OtherTypes) {
  uint64_t seed = 500;
  for (ElementType type : {ElementType::kFloat64, ElementType::kInt32, ElementType::kInt64}) {
    for (const GemmCase& g : Cases()) {
      GemmCase h = g;
      if (type != ElementType::kFloat64) h.alpha = h.beta = 1.0f;  // exact integer arithmetic
      SCOPED_TRACE(::testing::Message() << ElementTypeName(type) << " transA " << h.trans_a << " transB " << h.trans_b);
      CheckGemm(h, type, {}, seed++);
    }
  }
}

// Numbers from the ONNX spec example style, computed by hand:
// A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]], C = [1, -1], alpha 2, beta 3.
TEST(GemmTest, HandComputed) {
  KernelCall call;
  call.op_type = "Gemm";
  call.opset = 13;
  call.attributes.Set("alpha", 2.0f);
  call.attributes.Set("beta", 3.0f);
  call.inputs = {*Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4}), *Tensor::FromVector<float>({2, 2}, {5, 6, 7, 8}),
                 *Tensor::FromVector<float>({2}, {1, -1})};
  for (const std::vector<int>& constants : {std::vector<int>{}, std::vector<int>{1, 2}}) {
    call.constant_inputs = constants;
    auto out = RunKernel(call);
    ASSERT_TRUE(out.ok()) << out.status();
    // A·B = [[19, 22], [43, 50]].
    EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{41, 41, 89, 97}));
  }
}

TEST(GemmTest, ConcurrentRuns) {
  GemmCase g{70, 90, 50, false, true, 0.5f, 2.0f, {50}, true};
  const std::vector<double> a = Quantized(ElementType::kFloat32, {g.m * g.k}, RandomValues(g.m * g.k, 1));
  const std::vector<double> b = Quantized(ElementType::kFloat32, {g.k * g.n}, RandomValues(g.k * g.n, 2));
  const std::vector<double> c = Quantized(ElementType::kFloat32, {g.n}, RandomValues(g.n, 3));
  const std::vector<double> want = NaiveGemm(g, a, b, c);
  for (const std::vector<int>& constants : {std::vector<int>{}, std::vector<int>{1, 2}}) {
    KernelCall call = GemmCall(g, ElementType::kFloat32, a, b, c);
    call.constant_inputs = constants;
    auto outs = RunConcurrently(call, 4, 20);
    ASSERT_TRUE(outs.ok()) << outs.status();
    const std::vector<double> first = ToDoubles((*outs)[0][0]);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(first[i], want[i], 1e-4);
    for (int t = 1; t < 4; ++t) EXPECT_EQ(ToDoubles((*outs)[t][0]), first);
  }
}

TEST(GemmTest, Errors) {
  KernelCall call;
  call.op_type = "Gemm";
  call.opset = 13;
  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat32, {4, 5})};
  auto mismatch = RunKernel(call);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(mismatch.status().message().find("[2, 3]"), absl::string_view::npos) << mismatch.status();
  EXPECT_NE(mismatch.status().message().find("[4, 5]"), absl::string_view::npos) << mismatch.status();

  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat32, {3, 5}),
                 *Tensor::Create(ElementType::kFloat32, {4})};
  auto bad_c = RunKernel(call);
  ASSERT_FALSE(bad_c.ok());
  EXPECT_EQ(bad_c.status().code(), absl::StatusCode::kInvalidArgument);

  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3, 1}), *Tensor::Create(ElementType::kFloat32, {3, 5})};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);

  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat64, {3, 5})};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);

  call.inputs = {*Tensor::Create(ElementType::kUint8, {2, 3}), *Tensor::Create(ElementType::kUint8, {3, 5})};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kUnimplemented);

  // C is required before opset 11.
  call.opset = 9;
  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat32, {3, 5})};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);
  call.opset = 6;
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace attune::testing
