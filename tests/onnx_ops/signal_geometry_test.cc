// DFT, STFT, Col2Im, AffineGrid, TensorScatter, NonMaxSuppression and the
// optimizer steps against references written here from ONNX's definitions
// (std::complex sums, im2col's adjoint, the update formulas), on what the
// backend tests leave out: odd and padded / truncated lengths, a real inverse
// of odd length, a round trip, circular writes, suppression order, the
// Nesterov form; and the one-line refusals of bad inputs.
#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

using Doubles = std::vector<double>;
using Ints = std::vector<int64_t>;

absl::StatusOr<std::vector<Tensor>> RunTraining(std::string op, Attributes attrs, std::vector<Tensor> inputs,
                                                int outputs) {
  KernelCall call;
  call.op_type = std::move(op);
  call.domain = "ai.onnx.preview.training";
  call.opset = 1;
  call.attributes = std::move(attrs);
  call.inputs = std::move(inputs);
  call.num_outputs = outputs;
  return RunKernel(call);
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

void ExpectNear(const Tensor& t, const Doubles& want, double tol = 1e-4) {
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.data<float>()[i], want[i], tol) << "element " << i;
}

// n-point DFT of x (zero-padded or truncated), sign -1 forward, +1 inverse (with 1/n).
std::vector<std::complex<double>> Dft(std::vector<std::complex<double>> x, int n, bool inverse) {
  x.resize(n);
  std::vector<std::complex<double>> out(n);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      out[k] += x[j] * std::polar(1.0, (inverse ? 2 : -2) * std::numbers::pi * k * j / n);
  if (inverse)
    for (auto& v : out) v /= n;
  return out;
}

TEST(SignalTest, DftAlongAnAxisPaddedTruncatedAndInverse) {
  // x [2, 5, 1] real, transformed along axis 1 at lengths 5, 7 (padded) and 3 (truncated).
  const std::vector<float> x = Random(10, 1);
  for (int n : {5, 7, 3}) {
    auto out = RunOp("DFT", 20, {}, {F32({2, 5, 1}, x), I64({}, {n}), I64({}, {1})});
    ASSERT_TRUE(out.ok()) << out.status();
    Doubles want;
    for (int b = 0; b < 2; ++b) {
      std::vector<std::complex<double>> line(x.begin() + b * 5, x.begin() + b * 5 + 5);
      for (auto& v : Dft(line, n, false)) want.push_back(v.real()), want.push_back(v.imag());
    }
    EXPECT_EQ((*out)[0].shape(), (Shape{2, n, 2}));
    ExpectNear((*out)[0], want);
  }
  // Complex round trip at opset 17 (axis attribute), and onesided.
  const Tensor c = F32({1, 6, 2}, Random(12, 2));
  const Tensor spectrum = Run1("DFT", 17, Attrs({{"axis", int64_t{1}}}), {c});
  const Tensor back = Run1("DFT", 17, Attrs({{"axis", int64_t{1}}, {"inverse", int64_t{1}}}), {spectrum});
  Doubles orig(c.data<float>(), c.data<float>() + 12);
  ExpectNear(back, orig);
  const Tensor half = Run1("DFT", 17, Attrs({{"axis", int64_t{1}}, {"onesided", int64_t{1}}}), {F32({1, 6, 1}, Random(6, 3))});
  EXPECT_EQ(half.shape(), (Shape{1, 4, 2}));
  auto bad = RunOp("DFT", 20, {}, {c, Tensor(), I64({}, {2})});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "DFT node 'test_node': axis 2")) << bad.status();
}

TEST(SignalTest, RealInverseOfOddLengthMatchesTheHermitianSum) {
  // A one-sided spectrum of 3 bins inverted to 5 real samples (numpy's irfft(n=5)).
  const std::vector<float> bins = Random(6, 4);
  auto out = RunOp("DFT", 20, Attrs({{"inverse", int64_t{1}}, {"onesided", int64_t{1}}}),
                   {F32({1, 3, 2}, bins), I64({}, {5}), I64({}, {1})});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<std::complex<double>> full(5);
  full[0] = bins[0];  // the DC bin's imaginary part is ignored
  for (int k = 1; k <= 2; ++k) full[k] = {bins[2 * k], bins[2 * k + 1]}, full[5 - k] = std::conj(full[k]);
  Doubles want;
  for (auto& v : Dft(full, 5, true)) want.push_back(v.real());
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 5, 1}));
  ExpectNear((*out)[0], want);
}

TEST(SignalTest, StftFramesAWindowedSignal) {
  const std::vector<float> sig = Random(10, 5), win = {0.5f, 1.0f, 0.25f, 0.75f};
  auto out = RunOp("STFT", 17, {}, {F32({1, 10, 1}, sig), I64({}, {3}), F32({4}, win)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 3, 3, 2}));
  Doubles want;
  for (int f = 0; f < 3; ++f) {
    std::vector<std::complex<double>> frame(4);
    for (int j = 0; j < 4; ++j) frame[j] = sig[f * 3 + j] * win[j];
    auto spec = Dft(frame, 4, false);
    for (int k = 0; k < 3; ++k) want.push_back(spec[k].real()), want.push_back(spec[k].imag());
  }
  ExpectNear((*out)[0], want);
}

TEST(GeometryTest, Col2ImIsTheAdjointOfIm2Col) {
  // <col2im(y), x> == <y, im2col(x)> for random x and y, with strides, pads and dilations.
  const int c = 2, h = 5, w = 4, kh = 2, kw = 2, sh = 2, sw = 1, dh = 1, dw = 2, ph = 1, pw = 1;
  const int oh = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
  const std::vector<float> y = Random(c * kh * kw * oh * ow, 6), x = Random(c * h * w, 7);
  const Tensor img = Run1("Col2Im", 18,
                          Attrs({{"strides", Ints{sh, sw}}, {"dilations", Ints{dh, dw}}, {"pads", Ints{ph, pw, ph, pw}}}),
                          {F32({1, c * kh * kw, oh * ow}, y), I64({2}, {h, w}), I64({2}, {kh, kw})});
  ASSERT_EQ(img.shape(), (Shape{1, c, h, w}));
  double lhs = 0, rhs = 0;
  for (int i = 0; i < c * h * w; ++i) lhs += img.data<float>()[i] * x[i];
  for (int ch = 0; ch < c; ++ch)
    for (int a = 0; a < kh; ++a)
      for (int bb = 0; bb < kw; ++bb)
        for (int p = 0; p < oh; ++p)
          for (int q = 0; q < ow; ++q) {
            const int r = p * sh - ph + a * dh, s = q * sw - pw + bb * dw;
            if (r < 0 || r >= h || s < 0 || s >= w) continue;
            rhs += y[(((ch * kh + a) * kw + bb) * oh + p) * ow + q] * x[(ch * h + r) * w + s];
          }
  EXPECT_NEAR(lhs, rhs, 1e-4);
  auto bad = RunOp("Col2Im", 18, {}, {F32({1, 4, 3}, Random(12, 8)), I64({2}, {3, 3}), I64({2}, {2, 2})});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "Col2Im node 'test_node': input has shape")) << bad.status();
}

TEST(GeometryTest, AffineGridAppliesThetaToNormalisedPoints) {
  const std::vector<float> theta = {1.0f, 0.5f, 0.1f, -0.25f, 2.0f, 0.0f};
  for (int64_t align : {0, 1}) {
    const Tensor grid = Run1("AffineGrid", 20, Attrs({{"align_corners", align}}), {F32({1, 2, 3}, theta), I64({4}, {1, 1, 2, 3})});
    ASSERT_EQ(grid.shape(), (Shape{1, 2, 3, 2}));
    Doubles want;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) {
        const double y = align ? -1 + 2.0 * i / 1 : -1 + (2.0 * i + 1) / 2, x = align ? -1 + 2.0 * j / 2 : -1 + (2.0 * j + 1) / 3;
        want.push_back(theta[0] * x + theta[1] * y + theta[2]);
        want.push_back(theta[3] * x + theta[4] * y + theta[5]);
      }
    ExpectNear(grid, want, 1e-6);
  }
}

TEST(GeometryTest, TensorScatterLinearAndCircular) {
  const Tensor cache = Iota({2, 4, 1});
  const Tensor update = F32({2, 2, 1}, {-1, -2, -3, -4});
  EXPECT_EQ(Values<float>(Run1("TensorScatter", 24, {}, {cache, update, I64({2}, {1, 2})})),
            (std::vector<float>{0, -1, -2, 3, 4, 5, -3, -4}));
  EXPECT_EQ(Values<float>(Run1("TensorScatter", 24, Attrs({{"mode", std::string("circular")}}),
                               {cache, update, I64({2}, {3, 0})})),
            (std::vector<float>{-2, 1, 2, -1, -3, -4, 6, 7}));
  auto bad = RunOp("TensorScatter", 24, {}, {cache, update, I64({2}, {3, 0})});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "write_indices[0] is 3")) << bad.status();
}

TEST(GeometryTest, NonMaxSuppressionKeepsTheBestOfOverlaps) {
  // Boxes 0 and 1 overlap (IoU 0.81), box 2 is apart; box 1 scores highest.
  const Tensor boxes = F32({1, 3, 4}, {0, 0, 1, 1, 0, 0, 0.9f, 0.9f, 2, 2, 3, 3});
  const Tensor scores = F32({1, 1, 3}, {0.8f, 0.9f, 0.7f});
  auto out = RunOp("NonMaxSuppression", 11, {}, {boxes, scores, I64({1}, {3}), F32({1}, {0.5f}), F32({1}, {0.0f})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (Ints{0, 0, 1, 0, 0, 2}));
  auto loose = RunOp("NonMaxSuppression", 11, {}, {boxes, scores, I64({1}, {2}), F32({1}, {0.9f})});
  ASSERT_TRUE(loose.ok()) << loose.status();
  EXPECT_EQ(Values<int64_t>((*loose)[0]), (Ints{0, 0, 1, 0, 0, 0}));
  auto bad = RunOp("NonMaxSuppression", 11, {}, {boxes, F32({1, 1, 2}, {1, 2})});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "NonMaxSuppression node 'test_node': boxes")) << bad.status();
}

TEST(TrainingTest, OptimizerStepsFollowTheirFormulas) {
  const Tensor r = F32({}, {0.1f}), t = I64({}, {3});
  const std::vector<float> x = {1.0f, -2.0f}, g = {0.5f, 0.25f}, v = {0.2f, -0.1f}, h = {0.3f, 0.4f};
  auto adam = RunTraining("Adam", Attrs({{"norm_coefficient", 0.01f}}),
                    {r, t, F32({2}, x), F32({2}, g), F32({2}, v), F32({2}, h)}, 3);
  ASSERT_TRUE(adam.ok()) << adam.status();
  Doubles xw, vw, hw;
  for (int i = 0; i < 2; ++i) {
    const double gr = 0.01 * x[i] + g[i];
    const double vn = 0.9 * v[i] + 0.1 * gr, hn = 0.999 * h[i] + 0.001 * gr * gr;
    const double rate = 0.1 * std::sqrt(1 - std::pow(0.999, 3)) / (1 - std::pow(0.9, 3));
    xw.push_back(x[i] - rate * vn / (std::sqrt(hn) + 1e-6)), vw.push_back(vn), hw.push_back(hn);
  }
  ExpectNear((*adam)[0], xw, 1e-5);
  ExpectNear((*adam)[1], vw, 1e-6);
  ExpectNear((*adam)[2], hw, 1e-6);
  auto nesterov = RunTraining("Momentum",
                        Attrs({{"alpha", 0.9f}, {"beta", 0.5f}, {"mode", std::string("nesterov")}, {"norm_coefficient", 0.0f}}),
                        {r, t, F32({2}, x), F32({2}, g), F32({2}, v)}, 2);
  ASSERT_TRUE(nesterov.ok()) << nesterov.status();
  Doubles xm, vm;
  for (int i = 0; i < 2; ++i) {
    const double vn = 0.9 * v[i] + 0.5 * g[i];
    xm.push_back(x[i] - 0.1 * (g[i] + 0.9 * vn)), vm.push_back(vn);
  }
  ExpectNear((*nesterov)[0], xm, 1e-6);
  ExpectNear((*nesterov)[1], vm, 1e-6);
  auto bad = RunTraining("Momentum", Attrs({{"alpha", 0.9f}, {"beta", 0.5f}, {"norm_coefficient", 0.0f}}),
                   {r, t, F32({2}, x), F32({2}, g), F32({2}, v)}, 2);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "attribute 'mode' is required")) << bad.status();
}

}  // namespace
}  // namespace attune::testing
