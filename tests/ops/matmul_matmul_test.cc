// ONNX MatMul against a numpy-semantics reference written out in double here.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/kernel_runner.h"
#include "tests/ops/matmul_test_util.h"

namespace attune::testing {
namespace {

// numpy.matmul in double: 1-D promotion, right-aligned batch broadcasting.
std::vector<double> NaiveMatMul(std::vector<int64_t> a_shape, const std::vector<double>& a,
                                std::vector<int64_t> b_shape, const std::vector<double>& b,
                                std::vector<int64_t>* out_shape) {
  const bool a_vec = a_shape.size() == 1, b_vec = b_shape.size() == 1;
  if (a_vec) a_shape.insert(a_shape.begin(), 1);
  if (b_vec) b_shape.push_back(1);
  const int64_t m = a_shape[a_shape.size() - 2], k = a_shape.back(), n = b_shape.back();
  const size_t rank = std::max(a_shape.size(), b_shape.size());
  while (a_shape.size() < rank) a_shape.insert(a_shape.begin(), 1);
  while (b_shape.size() < rank) b_shape.insert(b_shape.begin(), 1);
  std::vector<int64_t> batch(rank - 2);
  for (size_t d = 0; d + 2 < rank; ++d) batch[d] = std::max(a_shape[d], b_shape[d]);
  out_shape->assign(batch.begin(), batch.end());
  if (!a_vec) out_shape->push_back(m);
  if (!b_vec) out_shape->push_back(n);
  const int64_t batches = Count(batch);
  std::vector<double> c(batches * m * n, 0.0);
  for (int64_t bi = 0; bi < batches; ++bi) {
    // Offsets of this batch in A and B, broadcasting dims of 1.
    int64_t rest = bi, a_off = 0, b_off = 0, a_stride = m * k, b_stride = k * n;
    for (int d = static_cast<int>(batch.size()) - 1; d >= 0; --d) {
      const int64_t coord = rest % batch[d];
      rest /= batch[d];
      a_off += (a_shape[d] == 1 ? 0 : coord) * a_stride;
      b_off += (b_shape[d] == 1 ? 0 : coord) * b_stride;
      a_stride *= a_shape[d];
      b_stride *= b_shape[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += a[a_off + i * k + p] * b[b_off + p * n + j];
        c[(bi * m + i) * n + j] = sum;
      }
  }
  return c;
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol_abs, double tol_rel) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol_abs + tol_rel * std::abs(want[i])) << "at flat index " << i;
}

struct Case {
  std::vector<int64_t> a, b;
};

void CheckMatMul(ElementType type, const Case& c, bool constant_b, int threads, uint64_t seed) {
  const bool integral = type == ElementType::kInt32 || type == ElementType::kInt64 || type == ElementType::kUint32;
  std::vector<double> av = integral ? RandomIntegers(Count(c.a), seed, 9) : RandomValues(Count(c.a), seed);
  std::vector<double> bv = integral ? RandomIntegers(Count(c.b), seed + 1, 9) : RandomValues(Count(c.b), seed + 1);
  if (type == ElementType::kUint32)
    for (auto* v : {&av, &bv})
      for (double& x : *v) x = std::abs(x);
  av = Quantized(type, c.a, av);
  bv = Quantized(type, c.b, bv);
  std::vector<int64_t> want_shape;
  const std::vector<double> want = NaiveMatMul(c.a, av, c.b, bv, &want_shape);

  KernelCall call;
  call.op_type = "MatMul";
  call.opset = 13;
  call.inputs = {MakeTensor(type, c.a, av), MakeTensor(type, c.b, bv)};
  if (constant_b) call.constant_inputs = {1};
  call.options.threads = threads;
  auto out = RunKernel(call);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].type(), type);
  ASSERT_EQ((*out)[0].shape(), want_shape);
  const int64_t k = c.a.back();
  switch (type) {
    case ElementType::kFloat64: ExpectNear(ToDoubles((*out)[0]), want, 1e-12 * (k + 1), 0); break;
    case ElementType::kFloat32: ExpectNear(ToDoubles((*out)[0]), want, 1e-6 * (k + 1), 1e-6); break;
    case ElementType::kFloat16:
    case ElementType::kBFloat16: ExpectNear(ToDoubles((*out)[0]), want, 1e-3 * (k + 1), 8e-3); break;
    default: ExpectNear(ToDoubles((*out)[0]), want, 0, 0); break;
  }
}

const std::vector<Case>& Shapes() {
  static const std::vector<Case> cases = {
      {{3, 4}, {4, 5}},                 // plain 2-D
      {{7}, {7}},                       // 1-D · 1-D -> scalar
      {{4}, {2, 4, 5}},                 // 1-D A promoted, batched B
      {{2, 3, 4}, {4}},                 // batched A, 1-D B
      {{4}, {4, 6}},                    // vector · matrix
      {{2, 1, 3, 17}, {1, 5, 17, 19}},  // both operands broadcast
      {{5, 33, 17}, {17, 23}},          // batched A folded into rows
      {{33, 17}, {4, 17, 23}},          // A broadcast over B's batch
      {{2, 3, 37, 53}, {2, 3, 53, 29}}, // sizes off multiples of 16
      {{1, 1, 1, 5, 3}, {2, 1, 3, 4}},  // rank mismatch with ones
      {{0, 4}, {4, 3}},                 // no rows
      {{2, 0}, {0, 3}},                 // K = 0: zeros
      {{3, 5}, {2, 5, 0}},              // N = 0
  };
  return cases;
}

TEST(MatMulTest, Float32Shapes) {
  uint64_t seed = 1;
  for (const Case& c : Shapes()) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << ShapeToString(c.a) << " x " << ShapeToString(c.b) << " threads " << threads);
      CheckMatMul(ElementType::kFloat32, c, /*constant_b=*/false, threads, seed++);
    }
  }
}

TEST(MatMulTest, Float32ConstantB) {
  uint64_t seed = 100;
  for (const Case& c : Shapes()) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << ShapeToString(c.a) << " x " << ShapeToString(c.b) << " threads " << threads);
      CheckMatMul(ElementType::kFloat32, c, /*constant_b=*/true, threads, seed++);
    }
  }
}

TEST(MatMulTest, OtherTypes) {
  uint64_t seed = 200;
  for (ElementType type : {ElementType::kFloat64, ElementType::kFloat16, ElementType::kBFloat16, ElementType::kInt32,
                           ElementType::kInt64, ElementType::kUint32}) {
    for (const Case& c : Shapes()) {
      SCOPED_TRACE(::testing::Message() << ElementTypeName(type) << " " << ShapeToString(c.a) << " x "
                                        << ShapeToString(c.b));
      CheckMatMul(type, c, /*constant_b=*/false, 2, seed++);
    }
  }
}

TEST(MatMulTest, HandComputed) {
  KernelCall call;
  call.op_type = "MatMul";
  call.inputs = {*Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                 *Tensor::FromVector<float>({3, 2}, {7, 8, 9, 10, 11, 12})};
  for (bool constant : {false, true}) {
    call.constant_inputs = constant ? std::vector<int>{1} : std::vector<int>{};
    auto out = RunKernel(call);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{58, 64, 139, 154}));
  }
}

// A transformer-sized product through the packed and the plain paths.
TEST(MatMulTest, PackedMatchesUnpackedLarge) {
  const std::vector<int64_t> a_shape{2, 61, 768}, b_shape{768, 200};
  std::vector<double> av = RandomValues(Count(a_shape), 7), bv = RandomValues(Count(b_shape), 8);
  av = Quantized(ElementType::kFloat32, a_shape, av);
  bv = Quantized(ElementType::kFloat32, b_shape, bv);
  std::vector<int64_t> want_shape;
  const std::vector<double> want = NaiveMatMul(a_shape, av, b_shape, bv, &want_shape);
  KernelCall call;
  call.op_type = "MatMul";
  call.inputs = {MakeTensor(ElementType::kFloat32, a_shape, av), MakeTensor(ElementType::kFloat32, b_shape, bv)};
  auto plain = RunKernel(call);
  call.constant_inputs = {1};
  auto packed = RunKernel(call);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(packed.ok()) << packed.status();
  ExpectNear(ToDoubles((*plain)[0]), want, 1e-4, 1e-5);
  ExpectNear(ToDoubles((*packed)[0]), want, 1e-4, 1e-5);
}

// One prepared kernel, four std::threads calling Run at once: every thread
// gets the same, correct result (packed constant weights and the plain path).
TEST(MatMulTest, ConcurrentRuns) {
  const std::vector<int64_t> a_shape{3, 45, 130}, b_shape{130, 70};
  std::vector<double> av = Quantized(ElementType::kFloat32, a_shape, RandomValues(Count(a_shape), 11));
  std::vector<double> bv = Quantized(ElementType::kFloat32, b_shape, RandomValues(Count(b_shape), 12));
  std::vector<int64_t> want_shape;
  const std::vector<double> want = NaiveMatMul(a_shape, av, b_shape, bv, &want_shape);
  for (bool constant : {false, true}) {
    for (int omp_threads : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << "constant " << constant << " omp threads " << omp_threads);
      KernelCall call;
      call.op_type = "MatMul";
      call.inputs = {MakeTensor(ElementType::kFloat32, a_shape, av), MakeTensor(ElementType::kFloat32, b_shape, bv)};
      if (constant) call.constant_inputs = {1};
      call.options.threads = omp_threads;
      auto outs = RunConcurrently(call, 4, 20);
      ASSERT_TRUE(outs.ok()) << outs.status();
      const std::vector<double> first = ToDoubles((*outs)[0][0]);
      ExpectNear(first, want, 1e-4, 1e-5);
      for (int t = 1; t < 4; ++t) EXPECT_EQ(ToDoubles((*outs)[t][0]), first) << "thread " << t;
    }
  }
}

// Rows change between calls of one kernel (the packed path caches a primitive per row count).
TEST(MatMulTest, PackedKernelAcrossRowCounts) {
  const std::vector<int64_t> b_shape{40, 24};
  std::vector<double> bv = Quantized(ElementType::kFloat32, b_shape, RandomValues(Count(b_shape), 21));
  KernelCall call;
  call.op_type = "MatMul";
  call.constant_inputs = {1};
  for (int64_t rows : {1, 2, 17, 64, 1, 300}) {
    const std::vector<int64_t> a_shape{rows, 40};
    std::vector<double> av = Quantized(ElementType::kFloat32, a_shape, RandomValues(Count(a_shape), rows));
    std::vector<int64_t> want_shape;
    const std::vector<double> want = NaiveMatMul(a_shape, av, b_shape, bv, &want_shape);
    call.inputs = {MakeTensor(ElementType::kFloat32, a_shape, av), MakeTensor(ElementType::kFloat32, b_shape, bv)};
    auto out = RunKernel(call);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear(ToDoubles((*out)[0]), want, 1e-5, 1e-5);
  }
}

TEST(MatMulTest, InnerDimensionMismatchNamesShapes) {
  for (bool constant : {false, true}) {
    KernelCall call;
    call.op_type = "MatMul";
    call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat32, {4, 5})};
    if (constant) call.constant_inputs = {1};
    auto out = RunKernel(call);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("[2, 3]"), absl::string_view::npos) << out.status();
    EXPECT_NE(out.status().message().find("[4, 5]"), absl::string_view::npos) << out.status();
  }
}

TEST(MatMulTest, BatchMismatch) {
  KernelCall call;
  call.op_type = "MatMul";
  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3, 4}), *Tensor::Create(ElementType::kFloat32, {3, 4, 5})};
  auto out = RunKernel(call);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("[3, 4, 5]"), absl::string_view::npos) << out.status();
}

TEST(MatMulTest, ScalarOperandRejected) {
  KernelCall call;
  call.op_type = "MatMul";
  call.inputs = {Tensor::Scalar(1.0f), *Tensor::Create(ElementType::kFloat32, {1, 2})};
  auto out = RunKernel(call);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MatMulTest, WrongDtypes) {
  KernelCall call;
  call.op_type = "MatMul";
  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat64, {3, 2})};
  auto mixed = RunKernel(call);
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(mixed.status().message().find("float64"), absl::string_view::npos) << mixed.status();

  call.inputs = {*Tensor::Create(ElementType::kInt8, {2, 3}), *Tensor::Create(ElementType::kInt8, {3, 2})};
  auto unsupported = RunKernel(call);
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(unsupported.status().code(), absl::StatusCode::kUnimplemented);

  call.inputs = {*Tensor::Create(ElementType::kBool, {2, 3}), *Tensor::Create(ElementType::kBool, {3, 2})};
  EXPECT_FALSE(RunKernel(call).ok());
}

}  // namespace
}  // namespace attune::testing
