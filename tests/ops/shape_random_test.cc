// Randomised Slice / Transpose / Expand against naive per-element references written here.
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

std::vector<int64_t> Strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int64_t d = static_cast<int64_t>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
  return st;
}

// Visits every multi-index of `shape` in row-major order.
template <typename F>
void ForEachIndex(const Shape& shape, F f) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(idx, i);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

TEST(ShapeRandom, SliceMatchesNaiveReference) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = 1 + rng() % 4;
    Shape shape(rank);
    for (int64_t& d : shape) d = rng() % 6;
    Tensor x = Iota(shape);
    std::vector<int64_t> starts, ends, axes, steps;
    Shape out_shape = shape;
    std::vector<int64_t> first(rank, 0), step_of(rank, 1);
    for (int a = 0; a < rank; ++a) {
      if (rng() % 3 == 0) continue;
      const int64_t dim = shape[a];
      int64_t st = static_cast<int64_t>(rng() % 7) - 3;
      if (st == 0) st = 1;
      const int64_t b = static_cast<int64_t>(rng() % 15) - 7, e = static_cast<int64_t>(rng() % 15) - 7;
      // Naive: walk i from the clamped start while it stays before the end.
      int64_t bb = b < 0 ? b + dim : b, ee = e < 0 ? e + dim : e;
      if (st > 0) bb = std::clamp<int64_t>(bb, 0, dim), ee = std::clamp<int64_t>(ee, 0, dim);
      // The spec clamps a backward start to [0, dim - 1] (numpy would leave -1: empty).
      else bb = std::clamp<int64_t>(bb, 0, std::max<int64_t>(dim - 1, 0)), ee = std::clamp<int64_t>(ee, -1, dim - 1);
      if (dim == 0) bb = 0, ee = 0;
      int64_t count = 0;
      for (int64_t i = bb; st > 0 ? i < ee : i > ee; i += st) ++count;
      out_shape[a] = count;
      first[a] = bb;
      step_of[a] = st;
      starts.push_back(b), ends.push_back(e), axes.push_back(a - (rng() % 2) * rank), steps.push_back(st);
    }
    if (axes.empty()) continue;
    const int64_t n = static_cast<int64_t>(axes.size());
    Tensor y = Run1("Slice", 13, {}, {x, I64({n}, starts), I64({n}, ends), I64({n}, axes), I64({n}, steps)});
    ASSERT_EQ(y.shape(), out_shape) << "iteration " << iter;
    const auto in_strides = Strides(shape);
    ForEachIndex(out_shape, [&](const std::vector<int64_t>& idx, int64_t flat) {
      int64_t src = 0;
      for (int d = 0; d < rank; ++d) src += (first[d] + idx[d] * step_of[d]) * in_strides[d];
      ASSERT_EQ(y.data<float>()[flat], static_cast<float>(src)) << "iteration " << iter;
    });
  }
}

TEST(ShapeRandom, TransposeMatchesNaiveReference) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = 1 + rng() % 5;
    Shape shape(rank);
    for (int64_t& d : shape) d = 1 + rng() % (rank <= 3 ? 40 : 9);
    std::vector<int64_t> perm(rank);
    for (int i = 0; i < rank; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    Tensor x = Iota(shape);
    Tensor y = Run1("Transpose", 13, Attrs({{"perm", perm}}), {x});
    Shape out_shape(rank);
    for (int d = 0; d < rank; ++d) out_shape[d] = shape[perm[d]];
    ASSERT_EQ(y.shape(), out_shape);
    const auto in_strides = Strides(shape);
    ForEachIndex(out_shape, [&](const std::vector<int64_t>& idx, int64_t flat) {
      int64_t src = 0;
      for (int d = 0; d < rank; ++d) src += idx[d] * in_strides[perm[d]];
      ASSERT_EQ(y.data<float>()[flat], static_cast<float>(src)) << "iteration " << iter;
    });
  }
}

TEST(ShapeRandom, ExpandMatchesNaiveReference) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = 1 + rng() % 4;
    Shape in_shape(rank), target(rank), out_shape(rank);
    for (int d = 0; d < rank; ++d) {
      const int64_t n = 1 + rng() % 5;
      const int kind = rng() % 3;  // 0: input 1, 1: target 1, 2: equal
      in_shape[d] = kind == 0 ? 1 : n;
      target[d] = kind == 1 ? 1 : n;
      out_shape[d] = n;
    }
    Tensor x = Iota(in_shape);
    Tensor y = Run1("Expand", 13, {}, {x, I64({rank}, target)});
    ASSERT_EQ(y.shape(), out_shape);
    const auto in_strides = Strides(in_shape);
    ForEachIndex(out_shape, [&](const std::vector<int64_t>& idx, int64_t flat) {
      int64_t src = 0;
      for (int d = 0; d < rank; ++d) src += (in_shape[d] == 1 ? 0 : idx[d]) * in_strides[d];
      ASSERT_EQ(y.data<float>()[flat], static_cast<float>(src)) << "iteration " << iter;
    });
  }
}

}  // namespace
}  // namespace attune::testing
