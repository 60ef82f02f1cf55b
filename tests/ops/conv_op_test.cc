// ONNX Conv against the double-precision reference (conv_test_util.h): 1-D,
// 2-D and 3-D, groups (1, 2, depthwise), strides, dilations, explicit and
// asymmetric pads, each auto_pad, with and without bias, odd sizes and the
// shapes of Whisper's, ViT's and wav2vec2's convolutions; through the
// registered kernel (oneDNN) on 1 and 2 threads, which agree to rounding,
// and through Attune's reference loop, bitwise equal on 1 and 2 threads. A
// NaN in X reaches exactly the outputs whose window holds it.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ops/conv/conv_params.h"
#include "ops/conv/conv_reference.h"
#include "ops/conv/onednn_conv.h"
#include "tests/common/kernel_runner.h"
#include "tests/ops/conv_test_util.h"

namespace attune::testing {
namespace {

std::vector<ConvCase> SweepCases() {
  return {
      // 1-D.
      {"whisper_conv1", {2, 6, 11}, {8, 6, 3}, true, 1, {}, {}, {1, 1}},
      {"whisper_conv2", {1, 8, 11}, {4, 8, 3}, true, 1, {2}, {}, {1, 1}},
      {"wav2vec2_first", {1, 1, 53}, {4, 1, 10}, false, 1, {5}},
      {"wav2vec2_later", {2, 4, 19}, {4, 4, 3}, false, 1, {2}},
      {"wav2vec2_pos_conv_groups", {1, 8, 17}, {8, 2, 6}, true, 4, {}, {}, {3, 3}},
      {"groups2_1d", {2, 4, 9}, {6, 2, 3}, true, 2, {1}, {2}, {1, 2}},
      {"depthwise_1d_dilated", {1, 6, 13}, {6, 1, 3}, false, 6, {}, {2}, {2, 2}},
      {"stride_dilation_asym", {1, 3, 20}, {2, 3, 4}, true, 1, {2}, {3}, {0, 2}},
      {"kernel_one", {2, 5, 7}, {3, 5, 1}, true},
      {"same_upper_1d", {1, 2, 9}, {3, 2, 4}, true, 1, {2}, {}, {}, "SAME_UPPER"},
      {"same_lower_1d", {1, 2, 10}, {3, 2, 4}, false, 1, {3}, {}, {}, "SAME_LOWER"},
      {"same_lower_dilated", {1, 2, 8}, {2, 2, 2}, false, 1, {}, {3}, {}, "SAME_LOWER"},
      {"valid_1d", {1, 3, 10}, {2, 3, 3}, true, 1, {2}, {}, {}, "VALID"},
      {"notset_explicit", {1, 3, 8}, {2, 3, 3}, false, 1, {}, {}, {1, 0}, "NOTSET", true},
      {"kernel_wider_than_stride_remainder", {1, 1, 5}, {1, 1, 1}, false, 1, {3}, {}, {}, "SAME_UPPER"},
      // 2-D.
      {"vit_patch16", {1, 3, 32, 48}, {8, 3, 16, 16}, true, 1, {16, 16}},
      {"clip_patch14", {2, 3, 28, 28}, {6, 3, 14, 14}, false, 1, {14, 14}, {}, {}, "", true},
      {"conv3x3_pad1", {2, 4, 7, 9}, {5, 4, 3, 3}, true, 1, {}, {}, {1, 1, 1, 1}},
      {"groups2_2d", {1, 4, 8, 7}, {6, 2, 3, 2}, true, 2, {2, 1}, {1, 2}, {1, 0, 0, 1}},
      {"depthwise_2d_same", {1, 5, 9, 9}, {5, 1, 3, 3}, true, 5, {2, 2}, {}, {}, "SAME_UPPER"},
      {"same_lower_2d", {1, 2, 6, 5}, {3, 2, 2, 2}, false, 1, {}, {}, {}, "SAME_LOWER"},
      {"valid_2d", {2, 3, 7, 8}, {4, 3, 3, 2}, true, 1, {2, 3}, {}, {}, "VALID"},
      {"odd_sizes", {3, 3, 5, 11}, {7, 3, 4, 1}, false, 1, {}, {}, {2, 0, 1, 0}},
      {"depthwise_multiplier", {1, 3, 6, 6}, {6, 1, 3, 3}, true, 3, {}, {2, 1}, {2, 1, 2, 1}},
      // 3-D.
      {"conv3d_pad1", {1, 2, 5, 6, 7}, {4, 2, 3, 3, 3}, true, 1, {}, {}, {1, 1, 1, 1, 1, 1}},
      {"groups2_3d", {2, 4, 6, 5, 4}, {4, 2, 2, 3, 2}, false, 2, {2, 1, 2}, {1, 2, 1}, {0, 1, 1, 1, 0, 0}},
      {"same_upper_3d", {1, 3, 5, 4, 6}, {2, 3, 2, 3, 2}, true, 1, {2, 2, 3}, {}, {}, "SAME_UPPER"},
      {"depthwise_3d", {1, 3, 4, 5, 6}, {3, 1, 3, 2, 3}, false, 3, {1, 2, 1}, {}, {1, 0, 1, 1, 0, 1}},
      {"valid_3d_patch", {1, 3, 4, 8, 8}, {5, 3, 2, 4, 4}, true, 1, {2, 4, 4}, {}, {}, "VALID"},
  };
}

struct Operands {
  std::vector<double> x, w, b;
  Tensor xt, wt, bt;
};

Operands MakeOperands(const ConvCase& c, uint64_t seed) {
  Operands o;
  o.x = Quantized(ElementType::kFloat32, c.x, RandomValues(Count(c.x), seed));
  o.w = Quantized(ElementType::kFloat32, c.w, RandomValues(Count(c.w), seed + 1));
  o.xt = MakeTensor(ElementType::kFloat32, c.x, o.x);
  o.wt = MakeTensor(ElementType::kFloat32, c.w, o.w);
  if (c.bias) {
    o.b = Quantized(ElementType::kFloat32, {c.w[0]}, RandomValues(c.w[0], seed + 2));
    o.bt = MakeTensor(ElementType::kFloat32, {c.w[0]}, o.b);
  }
  return o;
}

absl::StatusOr<Tensor> RunConv(const ConvCase& c, const Operands& o, int threads, bool constant_weights) {
  KernelCall call;
  call.op_type = "Conv";
  call.opset = 22;
  call.attributes = ConvAttrs(c);
  call.inputs = {o.xt, o.wt};
  if (c.bias) call.inputs.push_back(o.bt);
  if (constant_weights) call.constant_inputs = {1, 2};
  call.options.threads = threads;
  absl::StatusOr<std::vector<Tensor>> out = RunKernel(call);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// Float sums of a window's taps against the double ones: within a few ulps
// of the sum of the terms' magnitudes (`relative`), far below what a wrong
// tap would change.
constexpr double kSmallWindows = 4e-6;
constexpr double kLargeWindows = 2e-5;  // a thousand taps and more

void ExpectNear(const ConvReferenceResult& want, const std::vector<double>& got, const std::string& what,
                double relative = kSmallWindows) {
  ASSERT_EQ(got.size(), want.y.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want.y[i], relative * (1.0 + want.magnitude[i])) << what << " at " << i;
}

// oneDNN's GEMM convolution splits its sums by team size once a problem is
// large enough (Whisper-tiny's second conv, a batch of ViT patches), so 1 and
// 2 threads agree to rounding, not bit for bit (measured: within 1e-7 of the
// window's magnitude). Attune's own loop is bitwise equal (tested below).
constexpr double kTeamsAgree = 4e-7;

void ExpectTeamsAgree(const ConvReferenceResult& want, const Tensor& one, const Tensor& two) {
  ASSERT_EQ(one.shape(), two.shape());
  for (int64_t i = 0; i < one.num_elements(); ++i)
    ASSERT_NEAR(one.data<float>()[i], two.data<float>()[i], kTeamsAgree * (1.0 + want.magnitude[i]))
        << "1 and 2 threads differ at " << i;
}

TEST(ConvOpTest, SweepAgainstDoubleReference) {
  uint64_t seed = 11;
  for (const ConvCase& c : SweepCases()) {
    SCOPED_TRACE(c.name);
    const Operands o = MakeOperands(c, seed += 3);
    const ConvReferenceResult want = ReferenceConv(c, o.x, o.w, c.bias ? &o.b : nullptr);
    absl::StatusOr<Tensor> one = RunConv(c, o, 1, /*constant_weights=*/true);
    ASSERT_TRUE(one.ok()) << one.status();
    ASSERT_EQ(one->shape(), want.shape);
    ExpectNear(want, ToDoubles(*one), "1 thread");
    absl::StatusOr<Tensor> two = RunConv(c, o, 2, /*constant_weights=*/false);
    ASSERT_TRUE(two.ok()) << two.status();
    ASSERT_EQ(two->shape(), want.shape);
    ExpectTeamsAgree(want, *one, *two);
  }
}

// Attune's own loop, the fallback for what oneDNN does not take, on the same cases.
TEST(ConvOpTest, ReferenceLoopAgainstDoubleReference) {
  uint64_t seed = 101;
  for (const ConvCase& c : SweepCases()) {
    SCOPED_TRACE(c.name);
    const Operands o = MakeOperands(c, seed += 3);
    const ConvReferenceResult want = ReferenceConv(c, o.x, o.w, c.bias ? &o.b : nullptr);
    absl::StatusOr<ConvAttributes> attrs = ReadConvAttributes("Conv", ConvAttrs(c));
    ASSERT_TRUE(attrs.ok()) << attrs.status();
    const std::vector<int64_t> b_shape{c.w[0]};
    absl::StatusOr<ConvGeometry> g = PlanConv("Conv", *attrs, c.x, c.w, c.bias ? &b_shape : nullptr);
    ASSERT_TRUE(g.ok()) << g.status();
    ASSERT_EQ(g->output_shape(), want.shape);
    std::vector<float> y(Count(want.shape)), y2(y.size());
    const float* bias = c.bias ? o.bt.data<float>() : nullptr;
    ConvReference(*g, o.xt.data<float>(), o.wt.data<float>(), bias, y.data(), 1);
    ExpectNear(want, std::vector<double>(y.begin(), y.end()), "reference loop");
    ConvReference(*g, o.xt.data<float>(), o.wt.data<float>(), bias, y2.data(), 2);
    EXPECT_EQ(y, y2) << "1 and 2 threads differ";
  }
}

// Realistic channel counts (Whisper-tiny's convs on 200 frames, a ViT patch
// embedding of 192 channels), where oneDNN blocks and splits its GEMM.
TEST(ConvOpTest, ModelSizedShapes) {
  const std::vector<ConvCase> cases = {
      {"whisper_tiny_conv1", {1, 80, 200}, {384, 80, 3}, true, 1, {}, {}, {1, 1}},
      {"whisper_tiny_conv2", {1, 384, 200}, {384, 384, 3}, true, 1, {2}, {}, {1, 1}},
      {"vit_tiny_patch16", {2, 3, 64, 64}, {192, 3, 16, 16}, true, 1, {16, 16}},
  };
  uint64_t seed = 501;
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Operands o = MakeOperands(c, seed += 3);
    const ConvReferenceResult want = ReferenceConv(c, o.x, o.w, c.bias ? &o.b : nullptr);
    std::vector<Tensor> per_team;
    for (int threads : {1, 2}) {
      absl::StatusOr<Tensor> y = RunConv(c, o, threads, true);
      ASSERT_TRUE(y.ok()) << y.status();
      ExpectNear(want, ToDoubles(*y), absl::StrCat(threads, " threads"), kLargeWindows);
      per_team.push_back(*y);
    }
    ExpectTeamsAgree(want, per_team[0], per_team[1]);
  }
}

// Empty batches and outputs, and no input channels (every output is its bias).
TEST(ConvOpTest, EmptyDims) {
  {
    const ConvCase c{"empty_batch", {0, 3, 5}, {4, 3, 3}, true};
    const Operands o = MakeOperands(c, 7);
    absl::StatusOr<Tensor> y = RunConv(c, o, 2, true);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->shape(), (std::vector<int64_t>{0, 4, 3}));
  }
  {
    const ConvCase c{"no_channels", {2, 0, 5}, {4, 0, 3}, true, 1, {}, {}, {1, 1}};
    const Operands o = MakeOperands(c, 9);
    absl::StatusOr<Tensor> y = RunConv(c, o, 2, true);
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ(y->shape(), (std::vector<int64_t>{2, 4, 5}));
    for (int64_t i = 0; i < y->num_elements(); ++i)
      EXPECT_EQ(y->data<float>()[i], static_cast<float>(o.b[(i / 5) % 4])) << i;
  }
  // No input positions: every tap falls in the padding, also where X's other
  // sizes are huge.
  const int64_t huge = int64_t{1} << 31;
  for (const ConvCase& c : {ConvCase{"no_rows", {1, 2, 0, 3}, {4, 2, 1, 1}, true, 1, {}, {}, {1, 0, 1, 0}},
                            ConvCase{"empty_x_of_huge_dims", {1, 1, huge, huge, 0}, {3, 1, 1, 1, 1}, true, 1,
                                     {huge, huge, 1}, {}, {0, 0, 0, 0, 0, 1}}}) {
    SCOPED_TRACE(c.name);
    const Operands o = MakeOperands(c, 13);
    const ConvReferencePlan plan = PlanReferenceConv(c);
    absl::StatusOr<Tensor> y = RunConv(c, o, 2, true);
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ(y->shape(), plan.out_shape);
    const int64_t per_channel = y->num_elements() / c.w[0];
    for (int64_t i = 0; i < y->num_elements(); ++i)
      EXPECT_EQ(y->data<float>()[i], static_cast<float>(o.b[i / per_channel])) << i;
  }
}

// One NaN in X: NaN in exactly the outputs one of whose taps lands on it
// (whatever the weight, 0 · NaN is NaN), finite everywhere else, on both
// the kernel and the reference loop. A NaN no window reaches (between the
// taps of a stride-2 dilated kernel) leaves every output finite.
TEST(ConvOpTest, NanReachesOnlyWindowsThatHoldIt) {
  const std::vector<ConvCase> cases = {
      {"1d", {1, 2, 15}, {3, 2, 3}, true, 1, {2}, {2}, {1, 2}},
      {"1d_groups", {1, 4, 12}, {4, 2, 3}, false, 2, {1}, {}, {1, 1}},
      {"2d", {1, 2, 9, 8}, {2, 2, 3, 2}, true, 1, {2, 1}, {1, 2}, {1, 0, 2, 1}},
      {"2d_depthwise_same", {1, 3, 7, 7}, {3, 1, 3, 3}, false, 3, {2, 2}, {}, {}, "SAME_LOWER"},
      {"3d", {1, 2, 5, 5, 5}, {2, 2, 2, 3, 2}, false, 1, {2, 1, 2}, {}, {0, 1, 1, 1, 0, 0}},
  };
  uint64_t seed = 301;
  for (const ConvCase& c : cases) {
    int64_t reached_in_case = 0;
    for (int64_t at : {int64_t{0}, Count(c.x) / 2 + 1, Count(c.x) - 1}) {
      SCOPED_TRACE(absl::StrCat(c.name, " NaN at ", at));
      Operands o = MakeOperands(c, seed += 3);
      o.x[at] = std::numeric_limits<double>::quiet_NaN();
      o.xt.data<float>()[at] = std::numeric_limits<float>::quiet_NaN();
      // The reference marks where the NaN goes: its sums are NaN exactly there.
      const ConvReferenceResult want = ReferenceConv(c, o.x, o.w, c.bias ? &o.b : nullptr);
      for (double v : want.y) reached_in_case += std::isnan(v) ? 1 : 0;
      for (int threads : {1, 2}) {
        absl::StatusOr<Tensor> y = RunConv(c, o, threads, true);
        ASSERT_TRUE(y.ok()) << y.status();
        const std::vector<double> got = ToDoubles(*y);
        ASSERT_EQ(got.size(), want.y.size());
        for (size_t i = 0; i < got.size(); ++i) {
          if (std::isnan(want.y[i])) {
            EXPECT_TRUE(std::isnan(got[i])) << "output " << i << " should be NaN";
          } else {
            ASSERT_TRUE(std::isfinite(got[i])) << "output " << i << " should be finite, is " << got[i];
            EXPECT_NEAR(got[i], want.y[i], kSmallWindows * (1.0 + want.magnitude[i])) << i;
          }
        }
      }
      // Attune's loop too.
      absl::StatusOr<ConvAttributes> attrs = ReadConvAttributes("Conv", ConvAttrs(c));
      ASSERT_TRUE(attrs.ok());
      const std::vector<int64_t> b_shape{c.w[0]};
      absl::StatusOr<ConvGeometry> g = PlanConv("Conv", *attrs, c.x, c.w, c.bias ? &b_shape : nullptr);
      ASSERT_TRUE(g.ok()) << g.status();
      std::vector<float> y(want.y.size());
      ConvReference(*g, o.xt.data<float>(), o.wt.data<float>(), c.bias ? o.bt.data<float>() : nullptr, y.data(), 2);
      for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(std::isnan(y[i]), std::isnan(want.y[i])) << i;
    }
    EXPECT_GT(reached_in_case, 0) << c.name;
  }
}

// Every geometry of the sweep goes through oneDNN (none falls back), and a
// second run at the same shape and team size reuses the cached primitive.
TEST(ConvOpTest, OneDnnTakesTheSweepAndCachesPrimitives) {
  uint64_t seed = 701;
  for (const ConvCase& c : SweepCases()) {
    SCOPED_TRACE(c.name);
    const Operands o = MakeOperands(c, seed += 3);
    absl::StatusOr<ConvAttributes> attrs = ReadConvAttributes("Conv", ConvAttrs(c));
    ASSERT_TRUE(attrs.ok());
    const std::vector<int64_t> b_shape{c.w[0]};
    absl::StatusOr<ConvGeometry> g = PlanConv("Conv", *attrs, c.x, c.w, c.bias ? &b_shape : nullptr);
    ASSERT_TRUE(g.ok()) << g.status();
    ASSERT_TRUE(OneDnnConv::Takes(*g));
    OneDnnConv conv;
    std::vector<float> y(Count(g->output_shape()));
    std::vector<float> first;
    // Weights reordered on the call, then packed once and reused: the same primitive, the same bits.
    for (bool constant_weights : {false, true, true}) {
      absl::StatusOr<bool> done = conv.Run(*g, o.xt.data<float>(), o.wt.data<float>(), constant_weights,
                                           c.bias ? o.bt.data<float>() : nullptr, y.data(), 1);
      ASSERT_TRUE(done.ok()) << done.status();
      EXPECT_TRUE(*done) << "oneDNN declined the geometry";
      if (first.empty()) first = y;
      EXPECT_EQ(std::memcmp(first.data(), y.data(), y.size() * sizeof(float)), 0);
    }
    EXPECT_EQ(conv.cached(), 1u);
  }
}

}  // namespace
}  // namespace attune::testing
