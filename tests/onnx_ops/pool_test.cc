// The pools against a double-precision reference written from ONNX's
// definitions for 2-D inputs: MaxPool (with Indices, both storage orders),
// AveragePool (count_include_pad on and off), LpPool, each with strides,
// dilations, explicit and automatic pads and ceil_mode; the global pools; NaN
// reaching exactly the windows that hold it; and bad attributes refused with
// one line naming the node and the attribute.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

using Ints = std::vector<int64_t>;

struct PoolCase {
  std::string name;
  Shape x;  // [N, C, H, W]
  Ints kernel, strides = {1, 1}, dilations = {1, 1}, pads = {0, 0, 0, 0};
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
};

std::vector<PoolCase> Cases() {
  return {
      {"plain", {1, 2, 6, 7}, {2, 3}},
      {"resnet_stem", {2, 3, 9, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {"asymmetric_pads", {1, 1, 5, 6}, {3, 2}, {1, 2}, {1, 1}, {0, 1, 2, 0}},
      {"dilated", {1, 2, 8, 9}, {2, 3}, {1, 1}, {2, 2}},
      {"ceil", {1, 1, 7, 7}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, "NOTSET", true},
      {"ceil_last_window_on_pad", {1, 1, 6, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, "NOTSET", true},
      {"same_upper", {1, 2, 7, 5}, {3, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, "SAME_UPPER"},
      {"same_lower", {1, 2, 7, 5}, {3, 2}, {2, 1}, {1, 1}, {0, 0, 0, 0}, "SAME_LOWER"},
      {"valid", {1, 1, 8, 6}, {3, 3}, {2, 1}, {1, 1}, {0, 0, 0, 0}, "VALID"},
  };
}

// Output size and pads per axis, from ONNX's formulas.
void Geometry(const PoolCase& c, int a, int64_t& out, int64_t& pb) {
  const int64_t in = c.x[2 + a], k = c.kernel[a], s = c.strides[a], d = c.dilations[a];
  const int64_t span = (k - 1) * d + 1;
  if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
    out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (out - 1) * s + span - in);
    pb = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    return;
  }
  pb = c.auto_pad == "VALID" ? 0 : c.pads[a];
  const int64_t pe = c.auto_pad == "VALID" ? 0 : c.pads[2 + a];
  const double room = static_cast<double>(in + pb + pe - span) / static_cast<double>(s);
  out = static_cast<int64_t>(c.ceil_mode ? std::ceil(room) : std::floor(room)) + 1;
  if (c.ceil_mode && (out - 1) * s >= in + pb) --out;
}

enum class Kind { kMax, kAvg, kAvgIncludePad, kLp3 };

// Reference output (and MaxPool's row-major argmax) of one case.
std::vector<double> Reference(const PoolCase& c, Kind kind, const std::vector<float>& x, std::vector<int64_t>* argmax) {
  int64_t oh, ow, ph, pw;
  Geometry(c, 0, oh, ph);
  Geometry(c, 1, ow, pw);
  const int64_t h = c.x[2], w = c.x[3];
  // The padded extent a window may count under count_include_pad.
  const int64_t pe_h = c.auto_pad == "NOTSET" ? c.pads[2] : std::max<int64_t>(0, (oh - 1) * c.strides[0] +
                                                    (c.kernel[0] - 1) * c.dilations[0] + 1 - h - ph);
  const int64_t pe_w = c.auto_pad == "NOTSET" ? c.pads[3] : std::max<int64_t>(0, (ow - 1) * c.strides[1] +
                                                    (c.kernel[1] - 1) * c.dilations[1] + 1 - w - pw);
  std::vector<double> y;
  for (int64_t p = 0; p < c.x[0] * c.x[1]; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double best = -INFINITY, sum = 0;
        int64_t arg = -1, count = 0, padded = 0;
        for (int64_t ki = 0; ki < c.kernel[0]; ++ki)
          for (int64_t kj = 0; kj < c.kernel[1]; ++kj) {
            const int64_t r = i * c.strides[0] - ph + ki * c.dilations[0];
            const int64_t q = j * c.strides[1] - pw + kj * c.dilations[1];
            if (r >= -ph && r < h + pe_h && q >= -pw && q < w + pe_w) ++padded;
            if (r < 0 || r >= h || q < 0 || q >= w) continue;
            const double v = x[p * h * w + r * w + q];
            if (v > best || (std::isnan(v) && !std::isnan(best)) || arg < 0) best = v, arg = p * h * w + r * w + q;
            sum += kind == Kind::kLp3 ? std::pow(std::fabs(v), 3) : v;
            ++count;
          }
        if (argmax) argmax->push_back(arg);
        if (kind == Kind::kMax) y.push_back(best);
        else if (kind == Kind::kLp3) y.push_back(std::cbrt(sum));
        else y.push_back(sum / static_cast<double>(kind == Kind::kAvg ? count : padded));
      }
  return y;
}

Attributes PoolAttrs(const PoolCase& c) {
  Attributes a = Attrs({{"kernel_shape", c.kernel}, {"strides", c.strides}, {"dilations", c.dilations},
                        {"auto_pad", c.auto_pad}, {"ceil_mode", int64_t{c.ceil_mode}}});
  if (c.auto_pad == "NOTSET") a.Set("pads", c.pads);
  return a;
}

std::vector<float> RandomInput(const Shape& s, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2, 2);
  std::vector<float> v(n);
  for (float& e : v) e = u(rng);
  return v;
}

void ExpectNear(const std::vector<double>& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(static_cast<int64_t>(want.size()), got.num_elements()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got.data<float>()[i];
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(g)) << what << " at " << i;
    else EXPECT_NEAR(g, want[i], 1e-5 * (1 + std::fabs(want[i]))) << what << " at " << i;
  }
}

TEST(PoolTest, MatchesReferenceOnEveryCase) {
  uint32_t seed = 1;
  for (const PoolCase& c : Cases()) {
    std::vector<float> x = RandomInput(c.x, seed++);
    if (c.name == "dilated") x[5] = NAN;  // a NaN reaches the windows that hold it
    std::vector<int64_t> argmax;
    for (int threads : {1, 2}) {
      KernelCall call;
      call.op_type = "MaxPool";
      call.opset = 22;
      call.attributes = PoolAttrs(c);
      call.inputs = {F32(c.x, x)};
      call.num_outputs = 2;
      call.options.threads = threads;
      auto out = RunKernel(call);
      ASSERT_TRUE(out.ok()) << c.name << ": " << out.status();
      argmax.clear();
      ExpectNear(Reference(c, Kind::kMax, x, &argmax), (*out)[0], c.name + " max");
      EXPECT_EQ(Values<int64_t>((*out)[1]), argmax) << c.name;
    }
    for (auto [kind, include] : {std::pair{Kind::kAvg, 0}, std::pair{Kind::kAvgIncludePad, 1}}) {
      Attributes a = PoolAttrs(c);
      a.Set("count_include_pad", int64_t{include});
      ExpectNear(Reference(c, kind, x, nullptr), Run1("AveragePool", 22, a, {F32(c.x, x)}), c.name + " avg");
    }
    Attributes lp = PoolAttrs(c);
    lp.Set("p", int64_t{3});
    ExpectNear(Reference(c, Kind::kLp3, x, nullptr), Run1("LpPool", 22, lp, {F32(c.x, x)}), c.name + " lp");
  }
}

TEST(PoolTest, ColumnMajorIndices) {
  const PoolCase c{"plain", {1, 1, 4, 5}, {2, 2}, {2, 2}};
  const std::vector<float> x = RandomInput(c.x, 7);
  Attributes a = PoolAttrs(c);
  a.Set("storage_order", int64_t{1});
  auto out = RunOp("MaxPool", 12, a, {F32(c.x, x)}, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<int64_t> argmax;
  Reference(c, Kind::kMax, x, &argmax);
  for (size_t i = 0; i < argmax.size(); ++i) {
    const int64_t r = argmax[i] / 5, q = argmax[i] % 5;
    EXPECT_EQ((*out)[1].data<int64_t>()[i], q * 4 + r);
  }
}

TEST(PoolTest, GlobalPools) {
  const Shape s{2, 3, 4, 5};
  std::vector<float> x = RandomInput(s, 3);
  x[20] = NAN;  // plane 1
  const Tensor avg = Run1("GlobalAveragePool", 1, {}, {F32(s, x)});
  const Tensor mx = Run1("GlobalMaxPool", 1, {}, {F32(s, x)});
  const Tensor lp = Run1("GlobalLpPool", 2, Attrs({{"p", int64_t{2}}}), {F32(s, x)});
  EXPECT_EQ(avg.shape(), (Shape{2, 3, 1, 1}));
  for (int p = 0; p < 6; ++p) {
    double sum = 0, sq = 0, best = -INFINITY;
    bool nan = false;
    for (int i = 0; i < 20; ++i) {
      const double v = x[p * 20 + i];
      sum += v, sq += v * v, best = std::max(best, v), nan |= std::isnan(v);
    }
    if (nan) {
      EXPECT_TRUE(std::isnan(avg.data<float>()[p]) && std::isnan(mx.data<float>()[p]) &&
                  std::isnan(lp.data<float>()[p]));
      continue;
    }
    EXPECT_NEAR(avg.data<float>()[p], sum / 20, 1e-5);
    EXPECT_EQ(mx.data<float>()[p], static_cast<float>(best));
    EXPECT_NEAR(lp.data<float>()[p], std::sqrt(sq), 1e-5);
  }
}

TEST(PoolTest, Float16AndUint8) {
  const Shape s{1, 1, 2, 3};
  Tensor u8 = Make<uint8_t>(s, {1, 200, 3, 4, 5, 250});
  const Tensor y = Run1("MaxPool", 22, Attrs({{"kernel_shape", Ints{2, 2}}}), {u8});
  EXPECT_EQ(Values<uint8_t>(y), (std::vector<uint8_t>{200, 250}));
  Tensor h = Make<Float16>(s, {FloatToHalf(1), FloatToHalf(2), FloatToHalf(3), FloatToHalf(4), FloatToHalf(5),
                               FloatToHalf(7)});
  const Tensor a = Run1("AveragePool", 19, Attrs({{"kernel_shape", Ints{2, 2}}}), {h});
  ASSERT_EQ(a.type(), ElementType::kFloat16);
  EXPECT_EQ(HalfToFloat(a.data<Float16>()[0]), 3.0f);
  EXPECT_EQ(HalfToFloat(a.data<Float16>()[1]), 4.25f);  // (2 + 3 + 5 + 7) / 4
}

TEST(PoolTest, BadAttributesNameNodeAndAttribute) {
  const Tensor x = Iota({1, 1, 4, 4});
  struct Bad {
    Attributes attrs;
    std::string mention;
  };
  const std::vector<Bad> cases = {
      {{}, "kernel_shape"},
      {Attrs({{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1}}}), "pads"},
      {Attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{1}}}), "strides"},
      {Attrs({{"kernel_shape", Ints{2, 2, 2}}}), "input X"},
      {Attrs({{"kernel_shape", Ints{9, 2}}}), "does not fit"},
      {Attrs({{"kernel_shape", Ints{2, 2}}, {"storage_order", int64_t{3}}}), "storage_order"},
      {Attrs({{"kernel_shape", Ints{2, 2}}, {"auto_pad", std::string("SAME")}}), "auto_pad"},
  };
  for (const Bad& b : cases) {
    auto out = RunOp("MaxPool", 22, b.attrs, {x});
    ASSERT_FALSE(out.ok()) << b.mention;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
    EXPECT_TRUE(MessageHas(out.status(), "MaxPool node 'test_node'")) << out.status();
    EXPECT_TRUE(MessageHas(out.status(), b.mention)) << out.status();
  }
}

}  // namespace
}  // namespace attune::testing
