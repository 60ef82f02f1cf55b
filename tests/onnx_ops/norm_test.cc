// The CNN norms against double-precision references written from ONNX's
// definitions: BatchNormalization (inference; training mode refused),
// InstanceNormalization, GroupNormalization (scale per group at opset 18,
// per channel at 21), LpNormalization (p 1 and 2), LRN; DepthToSpace (DCR and
// CRD) against index arithmetic, and SpaceToDepth as its inverse.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

using Ints = std::vector<int64_t>;

std::vector<float> Random(int64_t n, uint32_t seed, float lo = -2, float hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& e : v) e = u(rng);
  return v;
}

void ExpectNear(const std::vector<double>& want, const Tensor& got, double tol = 1e-5) {
  ASSERT_EQ(static_cast<int64_t>(want.size()), got.num_elements());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got.data<float>()[i])) << i;
    else EXPECT_NEAR(got.data<float>()[i], want[i], tol * (1 + std::fabs(want[i]))) << i;
  }
}

TEST(CnnNormTest, BatchNormalization) {
  const int64_t n = 2, c = 3, hw = 5;
  std::vector<float> x = Random(n * c * hw, 1), scale = Random(c, 2), b = Random(c, 3), mean = Random(c, 4),
                     var = Random(c, 5, 0.1f, 2);
  x[7] = NAN;
  std::vector<double> want;
  for (int64_t i = 0; i < n * c * hw; ++i) {
    const int64_t ch = (i / hw) % c;
    want.push_back((x[i] - mean[ch]) / std::sqrt(var[ch] + 1e-3) * scale[ch] + b[ch]);
  }
  const Tensor y = Run1("BatchNormalization", 15, Attrs({{"epsilon", 1e-3f}}),
                        {F32({n, c, hw}, x), F32({c}, scale), F32({c}, b), F32({c}, mean), F32({c}, var)});
  ExpectNear(want, y);
  auto training = RunOp("BatchNormalization", 15, Attrs({{"training_mode", int64_t{1}}}),
                        {F32({n, c, hw}, x), F32({c}, scale), F32({c}, b), F32({c}, mean), F32({c}, var)}, 3);
  ASSERT_FALSE(training.ok());
  EXPECT_EQ(training.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(MessageHas(training.status(), "training")) << training.status();
  auto bad = RunOp("BatchNormalization", 15, {},
                   {F32({n, c, hw}, x), F32({2}, {1, 1}), F32({c}, b), F32({c}, mean), F32({c}, var)});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "input scale")) << bad.status();
}

// Normalises groups of `per_group` consecutive planes of `plane` elements; scale/bias per channel.
std::vector<double> GroupReference(const std::vector<float>& x, int64_t n, int64_t c, int64_t plane, int64_t groups,
                                   const std::vector<float>& scale, const std::vector<float>& bias, bool per_group,
                                   double eps) {
  std::vector<double> y(x.size());
  const int64_t per = c / groups;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t first = (b * c + g * per) * plane, count = per * plane;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < count; ++i) mean += x[first + i];
      mean /= count;
      for (int64_t i = 0; i < count; ++i) var += (x[first + i] - mean) * (x[first + i] - mean);
      var /= count;
      for (int64_t i = 0; i < count; ++i) {
        const int64_t ch = g * per + i / plane, p = per_group ? g : ch;
        y[first + i] = (x[first + i] - mean) / std::sqrt(var + eps) * scale[p] + bias[p];
      }
    }
  return y;
}

TEST(CnnNormTest, InstanceAndGroupNormalization) {
  const int64_t n = 2, c = 4, plane = 6;
  const std::vector<float> x = Random(n * c * plane, 11), sc = Random(c, 12), bc = Random(c, 13), sg = Random(2, 14),
                           bg = Random(2, 15);
  ExpectNear(GroupReference(x, n, c, plane, c, sc, bc, false, 1e-5),
             Run1("InstanceNormalization", 22, {}, {F32({n, c, 2, 3}, x), F32({c}, sc), F32({c}, bc)}));
  ExpectNear(GroupReference(x, n, c, plane, 2, sc, bc, false, 1e-4),
             Run1("GroupNormalization", 21, Attrs({{"num_groups", int64_t{2}}, {"epsilon", 1e-4f}}),
                  {F32({n, c, plane}, x), F32({c}, sc), F32({c}, bc)}));
  ExpectNear(GroupReference(x, n, c, plane, 2, sg, bg, true, 1e-5),
             Run1("GroupNormalization", 18, Attrs({{"num_groups", int64_t{2}}}),
                  {F32({n, c, plane}, x), F32({2}, sg), F32({2}, bg)}));
  auto bad = RunOp("GroupNormalization", 21, Attrs({{"num_groups", int64_t{3}}}),
                   {F32({n, c, plane}, x), F32({c}, sc), F32({c}, bc)});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "num_groups")) << bad.status();
}

TEST(CnnNormTest, LpNormalization) {
  const std::vector<float> x = Random(24, 21);
  for (int64_t p : {1, 2})
    for (int64_t axis : {0, 1, -1}) {
      const int64_t a = axis < 0 ? 2 : axis;
      const Shape s{2, 3, 4};
      std::vector<double> want(24);
      for (int64_t i = 0; i < 24; ++i) {
        int64_t idx[3] = {i / 12, (i / 4) % 3, i % 4};
        double norm = 0;
        for (int64_t k = 0; k < s[a]; ++k) {
          int64_t j[3] = {idx[0], idx[1], idx[2]};
          j[a] = k;
          const double v = x[j[0] * 12 + j[1] * 4 + j[2]];
          norm += p == 1 ? std::fabs(v) : v * v;
        }
        want[i] = x[i] / (p == 1 ? norm : std::sqrt(norm));
      }
      ExpectNear(want, Run1("LpNormalization", 22, Attrs({{"axis", axis}, {"p", p}}), {F32(s, x)}));
    }
}

TEST(CnnNormTest, Lrn) {
  const int64_t c = 5, plane = 3;
  const std::vector<float> x = Random(2 * c * plane, 31);
  const double alpha = 2e-3, beta = 0.6, bias = 1.5;
  const int64_t size = 4;  // channels c - 1 .. c + 2
  std::vector<double> want(x.size());
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    const int64_t n = i / (c * plane), ch = (i / plane) % c, p = i % plane;
    double sum = 0;
    for (int64_t k = std::max<int64_t>(0, ch - 1); k <= std::min<int64_t>(c - 1, ch + 2); ++k) {
      const double v = x[(n * c + k) * plane + p];
      sum += v * v;
    }
    want[i] = x[i] / std::pow(bias + alpha / size * sum, beta);
  }
  ExpectNear(want, Run1("LRN", 13,
                        Attrs({{"alpha", static_cast<float>(alpha)}, {"beta", static_cast<float>(beta)},
                               {"bias", static_cast<float>(bias)}, {"size", size}}),
                        {F32({2, c, plane}, x)}));
}

TEST(CnnNormTest, DepthToSpaceAndBack) {
  const int64_t n = 2, c = 8, h = 3, w = 2, b = 2, co = c / (b * b);
  const Tensor x = Iota({n, c, h, w});
  for (const std::string mode : {"DCR", "CRD"}) {
    const Tensor y = Run1("DepthToSpace", 13, Attrs({{"blocksize", b}, {"mode", mode}}), {x});
    ASSERT_EQ(y.shape(), (Shape{n, co, h * b, w * b}));
    for (int64_t i = 0; i < y.num_elements(); ++i) {
      const int64_t bn = i / (co * h * b * w * b), cc = (i / (h * b * w * b)) % co;
      const int64_t yy = (i / (w * b)) % (h * b), xx = i % (w * b);
      const int64_t bi = yy % b, bj = xx % b;
      const int64_t src_c = mode == "DCR" ? (bi * b + bj) * co + cc : cc * b * b + bi * b + bj;
      EXPECT_EQ(y.data<float>()[i], static_cast<float>(((bn * c + src_c) * h + yy / b) * w + xx / b)) << mode << i;
    }
    if (mode == "DCR") {
      const Tensor back = Run1("SpaceToDepth", 13, Attrs({{"blocksize", b}}), {y});
      EXPECT_EQ(Values<float>(back), Values<float>(x));
    }
  }
  auto bad = RunOp("DepthToSpace", 13, Attrs({{"blocksize", int64_t{3}}}), {x});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "blocksize")) << bad.status();
}

}  // namespace
}  // namespace attune::testing
