// Resize against references written from ONNX's formulas: bilinear under
// half_pixel, align_corners and asymmetric coordinates, nearest under each
// rounding mode, sizes with keep_aspect_ratio_policy, axes, and
// tf_crop_and_resize's extrapolation; Upsample; Pad in its four modes with
// negative pads and axes; CenterCropPad; GridSample. Bad inputs name node and tensor.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

double Coordinate(const std::string& mode, int64_t o, int64_t in, int64_t out) {
  const double s = static_cast<double>(out) / in;
  if (mode == "align_corners") return out == 1 ? 0 : o * (in - 1.0) / (out - 1.0);
  if (mode == "asymmetric") return o / s;
  return (o + 0.5) / s - 0.5;
}

// Bilinear resize of one [h, w] plane to [oh, ow], edges clamped.
std::vector<double> Bilinear(const Floats& x, int64_t h, int64_t w, int64_t oh, int64_t ow, const std::string& mode) {
  std::vector<double> y;
  auto at = [&](int64_t r, int64_t c) {
    return static_cast<double>(x[std::clamp<int64_t>(r, 0, h - 1) * w + std::clamp<int64_t>(c, 0, w - 1)]);
  };
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      const double r = Coordinate(mode, i, h, oh), c = Coordinate(mode, j, w, ow);
      const int64_t r0 = static_cast<int64_t>(std::floor(r)), c0 = static_cast<int64_t>(std::floor(c));
      const double fr = r - r0, fc = c - c0;
      y.push_back((1 - fr) * ((1 - fc) * at(r0, c0) + fc * at(r0, c0 + 1)) +
                  fr * ((1 - fc) * at(r0 + 1, c0) + fc * at(r0 + 1, c0 + 1)));
    }
  return y;
}

void ExpectNear(const std::vector<double>& want, const Tensor& got) {
  ASSERT_EQ(static_cast<int64_t>(want.size()), got.num_elements());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.data<float>()[i], want[i], 1e-5) << i;
}

const Tensor kNone;

TEST(ResizeTest, BilinearUnderEachCoordinateMode) {
  const Floats x = Values<float>(Iota({1, 1, 3, 4}));
  for (const std::string mode : {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"})
    for (Ints size : {Ints{5, 7}, Ints{2, 3}, Ints{6, 8}}) {
      const Tensor y = Run1("Resize", 19, Attrs({{"mode", std::string("linear")}, {"coordinate_transformation_mode", mode}}),
                            {Iota({1, 1, 3, 4}), kNone, kNone, I64({4}, {1, 1, size[0], size[1]})});
      ASSERT_EQ(y.shape(), (Shape{1, 1, size[0], size[1]}));
      ExpectNear(Bilinear(x, 3, 4, size[0], size[1], mode == "pytorch_half_pixel" ? "half_pixel" : mode), y);
    }
}

TEST(ResizeTest, NearestModesAndScales) {
  // One axis of 4 scaled by 1.5 (6 outputs), half_pixel: source x = (o + 0.5) / 1.5 - 0.5.
  const Tensor x = F32({1, 4}, {10, 20, 30, 40});
  const std::vector<std::pair<std::string, Floats>> cases = {
      // Sources -0.17, 0.5, 1.17, 1.83, 2.5, 3.17, clamped to [0, 3].
      {"round_prefer_floor", {10, 10, 20, 30, 30, 40}}, {"round_prefer_ceil", {10, 20, 20, 30, 40, 40}},
      {"floor", {10, 10, 20, 20, 30, 40}},              {"ceil", {10, 20, 30, 30, 40, 40}}};
  for (const auto& [mode, want] : cases) {
    const Tensor y = Run1("Resize", 13, Attrs({{"nearest_mode", mode}}), {x, kNone, F32({2}, {1, 1.5f})});
    EXPECT_EQ(Values<float>(y), want) << mode;
  }
  // Upsample: asymmetric, rounding down.
  const Tensor up = Run1("Upsample", 9, {}, {x, F32({2}, {1, 2})});
  EXPECT_EQ(Values<float>(up), (Floats{10, 10, 20, 20, 30, 30, 40, 40}));
  const Tensor up7 = Run1("Upsample", 7, Attrs({{"scales", Floats{1, 2}}}), {x});
  EXPECT_EQ(Values<float>(up7), Values<float>(up));
}

TEST(ResizeTest, AspectRatioPolicyAndAxes) {
  const Tensor x = Iota({1, 1, 4, 6});
  const Tensor smaller =
      Run1("Resize", 18, Attrs({{"keep_aspect_ratio_policy", std::string("not_larger")}, {"axes", Ints{2, 3}}}),
           {x, kNone, kNone, I64({2}, {2, 2})});
  EXPECT_EQ(smaller.shape(), (Shape{1, 1, 1, 2}));  // scale min(2/4, 2/6) = 1/3
  const Tensor larger =
      Run1("Resize", 18, Attrs({{"keep_aspect_ratio_policy", std::string("not_smaller")}, {"axes", Ints{2, 3}}}),
           {x, kNone, kNone, I64({2}, {2, 2})});
  EXPECT_EQ(larger.shape(), (Shape{1, 1, 2, 3}));  // scale 1/2
}

TEST(ResizeTest, CropAndResizeExtrapolates) {
  const Tensor x = F32({1, 3}, {1, 2, 3});
  const Tensor y = Run1("Resize", 13,
                        Attrs({{"mode", std::string("linear")},
                               {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                               {"extrapolation_value", 9.0f}}),
                        {x, F32({4}, {0, 0.5f, 1, 1.5f}), kNone, I64({2}, {1, 3})});
  // Source positions 1, 2, 3 (in units of the 2-element span): the last is outside.
  EXPECT_EQ(Values<float>(y), (Floats{2, 3, 9}));
}

TEST(ResizeTest, BadInputsNameNodeAndTensor) {
  const Tensor x = Iota({1, 1, 2, 2});
  auto both = RunOp("Resize", 13, {}, {x, kNone, F32({4}, {1, 1, 2, 2}), I64({4}, {1, 1, 4, 4})});
  ASSERT_FALSE(both.ok());
  EXPECT_TRUE(MessageHas(both.status(), "Resize node 'test_node'") && MessageHas(both.status(), "scales and sizes"))
      << both.status();
  auto length = RunOp("Resize", 13, {}, {x, kNone, F32({2}, {2, 2})});
  ASSERT_FALSE(length.ok());
  EXPECT_TRUE(MessageHas(length.status(), "scales")) << length.status();
  auto mode = RunOp("Resize", 13, Attrs({{"mode", std::string("area")}}), {x, kNone, F32({4}, {1, 1, 2, 2})});
  ASSERT_FALSE(mode.ok());
  EXPECT_TRUE(MessageHas(mode.status(), "'mode'")) << mode.status();
}

// Bilinear GridSample at normalised coordinates, against the same formula
// written for one 2-D plane: a point outside reads zeros, border clamps.
TEST(GridSampleTest, BilinearZerosAndBorder) {
  const Floats x = Values<float>(Iota({1, 1, 3, 4}));
  const Floats grid = {-1, -1, 1, 1, 0.2f, -0.6f, 1.5f, 0};  // (x, y) pairs: 4 points as [1, 1, 4, 2]
  for (const std::string padding : {"zeros", "border"})
    for (int64_t align : {0, 1}) {
      const Tensor y = Run1("GridSample", 22, Attrs({{"padding_mode", padding}, {"align_corners", align}}),
                            {Iota({1, 1, 3, 4}), F32({1, 1, 4, 2}, grid)});
      ASSERT_EQ(y.shape(), (Shape{1, 1, 1, 4}));
      for (int p = 0; p < 4; ++p) {
        auto unnormalise = [&](double g, double n) { return align ? (g + 1) / 2 * (n - 1) : ((g + 1) * n - 1) / 2; };
        double c = unnormalise(grid[2 * p], 4), r = unnormalise(grid[2 * p + 1], 3);
        if (padding == "border") c = std::clamp(c, 0.0, 3.0), r = std::clamp(r, 0.0, 2.0);
        auto at = [&](int64_t i, int64_t j) {
          if (i < 0 || i >= 3 || j < 0 || j >= 4) return 0.0;
          return static_cast<double>(x[i * 4 + j]);
        };
        const int64_t r0 = static_cast<int64_t>(std::floor(r)), c0 = static_cast<int64_t>(std::floor(c));
        const double fr = r - r0, fc = c - c0;
        const double want = (1 - fr) * ((1 - fc) * at(r0, c0) + fc * at(r0, c0 + 1)) +
                            fr * ((1 - fc) * at(r0 + 1, c0) + fc * at(r0 + 1, c0 + 1));
        EXPECT_NEAR(y.data<float>()[p], want, 1e-5) << padding << " align " << align << " point " << p;
      }
    }
  auto bad = RunOp("GridSample", 22, {}, {Iota({1, 1, 3, 4}), F32({1, 1, 2, 3}, {0, 0, 0, 0, 0, 0})});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "GridSample node 'test_node'") && MessageHas(bad.status(), "grid"))
      << bad.status();
}

TEST(PadTest, FourModes) {
  const Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor pads = I64({4}, {0, 2, 1, -1});  // columns: 2 before, 1 row after, one column cropped
  const std::vector<std::pair<std::string, Floats>> cases = {
      {"constant", {7, 7, 1, 2, 7, 7, 4, 5, 7, 7, 7, 7}},
      {"edge", {1, 1, 1, 2, 4, 4, 4, 5, 4, 4, 4, 5}},
      {"reflect", {3, 2, 1, 2, 6, 5, 4, 5, 3, 2, 1, 2}},
      {"wrap", {2, 3, 1, 2, 5, 6, 4, 5, 2, 3, 1, 2}},
  };
  for (const auto& [mode, want] : cases) {
    const Tensor y = Run1("Pad", 19, Attrs({{"mode", mode}}), {x, pads, F32({}, {7})});
    EXPECT_EQ(y.shape(), (Shape{3, 4})) << mode;
    EXPECT_EQ(Values<float>(y), want) << mode;
  }
  const Tensor axes = Run1("Pad", 18, {}, {x, I64({2}, {1, 0}), kNone, I64({1}, {1})});
  EXPECT_EQ(Values<float>(axes), (Floats{0, 1, 2, 3, 0, 4, 5, 6}));
  const Tensor old = Run1("Pad", 2, Attrs({{"pads", Ints{1, 0, 0, 0}}, {"value", 5.0f}}), {x});
  EXPECT_EQ(Values<float>(old), (Floats{5, 5, 5, 1, 2, 3, 4, 5, 6}));
  auto bad = RunOp("Pad", 19, {}, {x, I64({3}, {1, 1, 1})});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "Pad node 'test_node'") && MessageHas(bad.status(), "pads")) << bad.status();
}

TEST(PadTest, CenterCropPad) {
  const Tensor x = Iota({3, 4});
  const Tensor y = Run1("CenterCropPad", 18, {}, {x, I64({2}, {2, 6})});
  EXPECT_EQ(Values<float>(y), (Floats{0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 7, 0}));
}

}  // namespace
}  // namespace attune::testing
