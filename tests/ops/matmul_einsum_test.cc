// ONNX Einsum: each equation checked against explicit loops written for it here.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/kernel_runner.h"
#include "tests/ops/matmul_test_util.h"

namespace attune::testing {
namespace {

struct Operand {
  std::vector<int64_t> shape;
  std::vector<double> values;
  double at(std::initializer_list<int64_t> idx) const {
    int64_t offset = 0, d = 0;
    for (int64_t i : idx) offset = offset * shape[d++] + i;
    return values[offset];
  }
};

Operand Random(ElementType type, std::vector<int64_t> shape, uint64_t seed) {
  const bool integral = type == ElementType::kInt32 || type == ElementType::kInt64;
  std::vector<double> v = integral ? RandomIntegers(Count(shape), seed, 5) : RandomValues(Count(shape), seed);
  return {shape, Quantized(type, shape, v)};
}

absl::StatusOr<Tensor> RunEinsum(const std::string& equation, ElementType type, const std::vector<Operand>& ops,
                                 int threads = 2) {
  KernelCall call;
  call.op_type = "Einsum";
  call.opset = 12;
  call.attributes.Set("equation", equation);
  for (const Operand& op : ops) call.inputs.push_back(MakeTensor(type, op.shape, op.values));
  call.options.threads = threads;
  auto out = RunKernel(call);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

void ExpectEinsum(const std::string& equation, ElementType type, const std::vector<Operand>& ops,
                  const std::vector<int64_t>& want_shape, const std::vector<double>& want) {
  SCOPED_TRACE(equation + " " + ElementTypeName(type));
  auto out = RunEinsum(equation, type, ops);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->type(), type);
  ASSERT_EQ(out->shape(), want_shape);
  const std::vector<double> got = ToDoubles(*out);
  const double tol = type == ElementType::kFloat64 ? 1e-12
                     : type == ElementType::kFloat32 ? 1e-5
                     : type == ElementType::kFloat16 ? 2e-2
                                                     : 0;
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << "at " << i;
}

const std::vector<ElementType> kTypes = {ElementType::kFloat32, ElementType::kFloat64, ElementType::kFloat16,
                                         ElementType::kInt32, ElementType::kInt64};

TEST(EinsumTest, BatchedMatMul) {
  for (ElementType type : kTypes) {
    const Operand a = Random(type, {3, 5, 17}, 1), b = Random(type, {3, 17, 6}, 2);
    std::vector<double> want;
    for (int64_t x = 0; x < 3; ++x)
      for (int64_t i = 0; i < 5; ++i)
        for (int64_t k = 0; k < 6; ++k) {
          double s = 0;
          for (int64_t j = 0; j < 17; ++j) s += a.at({x, i, j}) * b.at({x, j, k});
          want.push_back(s);
        }
    ExpectEinsum("bij,bjk->bik", type, {a, b}, {3, 5, 6}, want);
    // Implicit output keeps labels seen exactly once, so b is summed too.
    std::vector<double> summed_b(5 * 6, 0.0);
    for (size_t e = 0; e < want.size(); ++e) summed_b[e % 30] += want[e];
    ExpectEinsum("bij,bjk", type, {a, b}, {5, 6}, summed_b);
    ExpectEinsum(" b i j , b j k -> b i k ", type, {a, b}, {3, 5, 6}, want);
  }
}

TEST(EinsumTest, AttentionScores) {
  for (ElementType type : kTypes) {
    const Operand q = Random(type, {2, 3, 7, 16}, 3), k = Random(type, {2, 3, 9, 16}, 4);
    std::vector<double> want;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 3; ++h)
        for (int64_t i = 0; i < 7; ++i)
          for (int64_t j = 0; j < 9; ++j) {
            double s = 0;
            for (int64_t d = 0; d < 16; ++d) s += q.at({b, h, i, d}) * k.at({b, h, j, d});
            want.push_back(s);
          }
    ExpectEinsum("bhid,bhjd->bhij", type, {q, k}, {2, 3, 7, 9}, want);
  }
}

TEST(EinsumTest, AttentionContextIntoOtherLayout) {
  // P·V written straight into [b, i, h, d].
  const ElementType type = ElementType::kFloat32;
  const Operand p = Random(type, {2, 3, 5, 6}, 5), v = Random(type, {2, 3, 6, 4}, 6);
  std::vector<double> want;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t h = 0; h < 3; ++h)
        for (int64_t d = 0; d < 4; ++d) {
          double s = 0;
          for (int64_t j = 0; j < 6; ++j) s += p.at({b, h, i, j}) * v.at({b, h, j, d});
          want.push_back(s);
        }
  ExpectEinsum("bhij,bhjd->bihd", type, {p, v}, {2, 5, 3, 4}, want);
}

TEST(EinsumTest, PlainMatMulTransposeAndPermutedOperands) {
  for (ElementType type : kTypes) {
    const Operand a = Random(type, {19, 21}, 7), b = Random(type, {21, 18}, 8);
    std::vector<double> mm, t, tt;
    for (int64_t i = 0; i < 19; ++i)
      for (int64_t k = 0; k < 18; ++k) {
        double s = 0;
        for (int64_t j = 0; j < 21; ++j) s += a.at({i, j}) * b.at({j, k});
        mm.push_back(s);
      }
    ExpectEinsum("ij,jk", type, {a, b}, {19, 18}, mm);
    ExpectEinsum("ij,jk->ik", type, {a, b}, {19, 18}, mm);
    for (int64_t j = 0; j < 21; ++j)
      for (int64_t i = 0; i < 19; ++i) t.push_back(a.at({i, j}));
    ExpectEinsum("ij->ji", type, {a}, {21, 19}, t);
    // (A·B)ᵀ via the output order.
    for (int64_t k = 0; k < 18; ++k)
      for (int64_t i = 0; i < 19; ++i) tt.push_back(mm[i * 18 + k]);
    ExpectEinsum("ij,jk->ki", type, {a, b}, {18, 19}, tt);
    // Aᵀ as the first operand: "ji,jk->ik" with A stored [j, i].
    const Operand at = Random(type, {21, 19}, 9);
    std::vector<double> atb;
    for (int64_t i = 0; i < 19; ++i)
      for (int64_t k = 0; k < 18; ++k) {
        double s = 0;
        for (int64_t j = 0; j < 21; ++j) s += at.at({j, i}) * b.at({j, k});
        atb.push_back(s);
      }
    ExpectEinsum("ji,jk->ik", type, {at, b}, {19, 18}, atb);
  }
}

TEST(EinsumTest, GroupedLabels) {
  // Two contracted labels and two free labels on each side, shuffled.
  const ElementType type = ElementType::kFloat64;
  const Operand a = Random(type, {3, 4, 5, 2}, 10), b = Random(type, {5, 6, 3, 7}, 11);
  std::vector<double> want;
  for (int64_t l = 0; l < 7; ++l)
    for (int64_t x = 0; x < 4; ++x)
      for (int64_t y = 0; y < 2; ++y)
        for (int64_t m = 0; m < 6; ++m) {
          double s = 0;
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t k = 0; k < 5; ++k) s += a.at({i, x, k, y}) * b.at({k, m, i, l});
          want.push_back(s);
        }
  ExpectEinsum("ixky,kmil->lxym", type, {a, b}, {7, 4, 2, 6}, want);
}

TEST(EinsumTest, InnerOuterTraceDiagonalSum) {
  for (ElementType type : kTypes) {
    const Operand x = Random(type, {9}, 12), y = Random(type, {9}, 13), z = Random(type, {4}, 14);
    double inner = 0;
    for (int64_t i = 0; i < 9; ++i) inner += x.at({i}) * y.at({i});
    ExpectEinsum("i,i", type, {x, y}, {}, {inner});
    ExpectEinsum("i,i->", type, {x, y}, {}, {inner});
    std::vector<double> outer;
    for (int64_t i = 0; i < 9; ++i)
      for (int64_t j = 0; j < 4; ++j) outer.push_back(x.at({i}) * z.at({j}));
    ExpectEinsum("i,j->ij", type, {x, z}, {9, 4}, outer);

    const Operand sq = Random(type, {6, 6}, 15);
    double trace = 0;
    std::vector<double> diag;
    for (int64_t i = 0; i < 6; ++i) {
      trace += sq.at({i, i});
      diag.push_back(sq.at({i, i}));
    }
    ExpectEinsum("ii", type, {sq}, {}, {trace});
    ExpectEinsum("ii->i", type, {sq}, {6}, diag);

    const Operand m = Random(type, {3, 5}, 16);
    double total = 0;
    std::vector<double> rows(3, 0.0);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        total += m.at({i, j});
        rows[i] += m.at({i, j});
      }
    ExpectEinsum("ij->", type, {m}, {}, {total});
    ExpectEinsum("ij->i", type, {m}, {3}, rows);
  }
}

TEST(EinsumTest, EllipsisBroadcast) {
  const ElementType type = ElementType::kFloat32;
  // A [2, 1, 3, 4] and B [5, 4, 6]: the ellipses are [2, 1] and [5] -> [2, 5].
  const Operand a = Random(type, {2, 1, 3, 4}, 17), b = Random(type, {5, 4, 6}, 18);
  std::vector<double> want;
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t q = 0; q < 5; ++q)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t k = 0; k < 6; ++k) {
          double s = 0;
          for (int64_t j = 0; j < 4; ++j) s += a.at({p, 0, i, j}) * b.at({q, j, k});
          want.push_back(s);
        }
  ExpectEinsum("...ij,...jk->...ik", type, {a, b}, {2, 5, 3, 6}, want);
  ExpectEinsum("...ij,...jk", type, {a, b}, {2, 5, 3, 6}, want);

  // Ellipsis in the middle, a batch diagonal, and the ellipsis moved in the output.
  const Operand c = Random(type, {3, 2, 4, 3}, 19);
  std::vector<double> diag;  // "i...i->...i": out[p, q, i] = c[i, p, q, i]
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t q = 0; q < 4; ++q)
      for (int64_t i = 0; i < 3; ++i) diag.push_back(c.at({i, p, q, i}));
  ExpectEinsum("i...i->...i", type, {c}, {2, 4, 3}, diag);
  std::vector<double> perm;  // "i...j->j...i"
  for (int64_t j = 0; j < 3; ++j)
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t q = 0; q < 4; ++q)
        for (int64_t i = 0; i < 3; ++i) perm.push_back(c.at({i, p, q, j}));
  ExpectEinsum("i...j->j...i", type, {c}, {3, 2, 4, 3}, perm);
}

TEST(EinsumTest, ThreeOperands) {
  const ElementType type = ElementType::kFloat64;
  const Operand a = Random(type, {3, 4}, 20), b = Random(type, {4, 5}, 21), c = Random(type, {5, 2}, 22);
  std::vector<double> want;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t l = 0; l < 2; ++l) {
      double s = 0;
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t k = 0; k < 5; ++k) s += a.at({i, j}) * b.at({j, k}) * c.at({k, l});
      want.push_back(s);
    }
  ExpectEinsum("ij,jk,kl->il", type, {a, b, c}, {3, 2}, want);
}

TEST(EinsumTest, SummedWithinOneOperandAndSizeOneBroadcast) {
  const ElementType type = ElementType::kFloat64;
  // "ij,jk->k": i is summed inside A only (general path).
  const Operand a = Random(type, {3, 4}, 23), b = Random(type, {4, 5}, 24);
  std::vector<double> want(5, 0.0);
  for (int64_t k = 0; k < 5; ++k)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j) want[k] += a.at({i, j}) * b.at({j, k});
  ExpectEinsum("ij,jk->k", type, {a, b}, {5}, want);
  // A letter label of size 1 broadcasts like numpy: "ij,ij->ij" with [2,3] and [1,3].
  const Operand c = Random(type, {2, 3}, 25), d = Random(type, {1, 3}, 26);
  std::vector<double> prod;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) prod.push_back(c.at({i, j}) * d.at({0, j}));
  ExpectEinsum("ij,ij->ij", type, {c, d}, {2, 3}, prod);
}

TEST(EinsumTest, ConcurrentRuns) {
  KernelCall call;
  call.op_type = "Einsum";
  call.opset = 12;
  call.attributes.Set("equation", std::string("bhid,bhjd->bhij"));
  const Operand q = Random(ElementType::kFloat32, {1, 4, 33, 16}, 30), k = Random(ElementType::kFloat32, {1, 4, 40, 16}, 31);
  call.inputs = {MakeTensor(ElementType::kFloat32, q.shape, q.values), MakeTensor(ElementType::kFloat32, k.shape, k.values)};
  auto outs = RunConcurrently(call, 4, 10);
  ASSERT_TRUE(outs.ok()) << outs.status();
  const std::vector<double> first = ToDoubles((*outs)[0][0]);
  ASSERT_EQ(first.size(), 4u * 33 * 40);
  // Spot-check one element against a hand loop: [0, 2, 5, 7].
  double s = 0;
  for (int64_t d = 0; d < 16; ++d) s += q.at({0, 2, 5, d}) * k.at({0, 2, 7, d});
  EXPECT_NEAR(first[(2 * 33 + 5) * 40 + 7], s, 1e-5);
  for (int t = 1; t < 4; ++t) EXPECT_EQ(ToDoubles((*outs)[t][0]), first);
}

TEST(EinsumTest, Errors) {
  const Operand a = Random(ElementType::kFloat32, {2, 3}, 1), b = Random(ElementType::kFloat32, {4, 5}, 2);
  auto code = [](const absl::StatusOr<Tensor>& r) { return r.status().code(); };
  EXPECT_EQ(code(RunEinsum("ij,jk->ik", ElementType::kFloat32, {a, b})), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(RunEinsum("ijk->i", ElementType::kFloat32, {a})), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(RunEinsum("ij->iz", ElementType::kFloat32, {a})), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(RunEinsum("ij->ii", ElementType::kFloat32, {a})), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(RunEinsum("i2->i", ElementType::kFloat32, {a})), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(RunEinsum("...i->i", ElementType::kFloat32, {a})), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(RunEinsum("i......j->ij", ElementType::kFloat32, {a})), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(RunEinsum("ij,jk->ik", ElementType::kFloat32, {a})), absl::StatusCode::kInvalidArgument);
  auto msg = RunEinsum("ij,jk->ik", ElementType::kFloat32, {a, b});
  EXPECT_NE(msg.status().message().find("[4, 5]"), absl::string_view::npos) << msg.status();

  KernelCall call;
  call.op_type = "Einsum";
  call.opset = 12;
  call.attributes.Set("equation", std::string("ij,jk->ik"));
  call.inputs = {*Tensor::Create(ElementType::kFloat32, {2, 3}), *Tensor::Create(ElementType::kFloat64, {3, 2})};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);
  call.inputs = {*Tensor::Create(ElementType::kBool, {2, 3}), *Tensor::Create(ElementType::kBool, {3, 2})};
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kUnimplemented);
  call.attributes = Attributes();
  EXPECT_EQ(RunKernel(call).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace attune::testing
