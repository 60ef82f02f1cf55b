// A Whisper-like encoder front end as a whole graph: Conv1d(k=3, p=1) → GELU
// → Conv1d(k=3, s=2, p=1) → GELU → Transpose(0, 2, 1), GELU written as torch
// exports nn.GELU() at opset 17 (erf), with batch and frames symbolic. Run
// through a session (shape inference, the GELU fusion, the plan) on 1 and 2
// threads against the double-precision reference.
#include <cmath>
#include <memory>
#include <vector>

#include "engine/session_impl.h"
#include "gtest/gtest.h"
#include "tests/common/graph_builder.h"
#include "tests/ops/conv_test_util.h"

namespace attune::testing {
namespace {

constexpr int64_t kMels = 8, kWidth = 12;
using Ints = std::vector<int64_t>;

// nn.GELU() as torch exports it below opset 20: (x · (erf(x / √2) + 1)) · 0.5.
Value* TorchGelu(GraphBuilder& b, Value* x, const std::string& name) {
  Value* erf = b.Node("Erf", {b.Node("Div", {x, b.Constant(name + "_sqrt2", Tensor::Scalar<float>(1.4142135623730951f))})});
  Value* one = b.Constant(name + "_one", Tensor::Scalar<float>(1.0f));
  Value* half = b.Constant(name + "_half", Tensor::Scalar<float>(0.5f));
  return b.Node("Mul", {b.Node("Mul", {x, b.Node("Add", {erf, one})}), half});
}

struct Weights {
  std::vector<double> w1, b1, w2, b2;
};

Weights MakeWeights() {
  Weights w;
  w.w1 = Quantized(ElementType::kFloat32, {kWidth, kMels, 3}, RandomValues(kWidth * kMels * 3, 41));
  w.b1 = Quantized(ElementType::kFloat32, {kWidth}, RandomValues(kWidth, 42));
  w.w2 = Quantized(ElementType::kFloat32, {kWidth, kWidth, 3}, RandomValues(kWidth * kWidth * 3, 43));
  w.b2 = Quantized(ElementType::kFloat32, {kWidth}, RandomValues(kWidth, 44));
  return w;
}

std::unique_ptr<Graph> FrontEnd(const Weights& w) {
  GraphBuilder b(17);
  Value* x = b.Input("input_features", ElementType::kFloat32, Dims({"batch", kMels, "frames"}));
  auto constant = [&](const std::string& name, const Ints& shape, const std::vector<double>& v) {
    return b.Constant(name, MakeTensor(ElementType::kFloat32, shape, v));
  };
  Value* c1 = b.Node("Conv",
                     {x, constant("conv1.weight", {kWidth, kMels, 3}, w.w1), constant("conv1.bias", {kWidth}, w.b1)},
                     Attrs({{"kernel_shape", Ints{3}}, {"pads", Ints{1, 1}}, {"strides", Ints{1}},
                            {"dilations", Ints{1}}, {"group", int64_t{1}}}),
                     "/conv1/Conv");
  Value* g1 = TorchGelu(b, c1, "gelu1");
  Value* c2 = b.Node("Conv",
                     {g1, constant("conv2.weight", {kWidth, kWidth, 3}, w.w2), constant("conv2.bias", {kWidth}, w.b2)},
                     Attrs({{"kernel_shape", Ints{3}}, {"pads", Ints{1, 1}}, {"strides", Ints{2}},
                            {"dilations", Ints{1}}, {"group", int64_t{1}}}),
                     "/conv2/Conv");
  Value* g2 = TorchGelu(b, c2, "gelu2");
  b.Output(b.Node("Transpose", {g2}, Attrs({{"perm", Ints{0, 2, 1}}}), "/Transpose"));
  return b.Build();
}

// The same in double: [batch, frames', width].
std::vector<double> Reference(const Weights& w, const std::vector<double>& x, int64_t batch, int64_t frames,
                              std::vector<int64_t>* shape) {
  auto gelu = [](std::vector<double> v) {
    for (double& e : v) e = 0.5 * e * (1.0 + std::erf(e / std::sqrt(2.0)));
    return v;
  };
  const ConvCase conv1{"conv1", {batch, kMels, frames}, {kWidth, kMels, 3}, true, 1, {}, {}, {1, 1}};
  const std::vector<double> h = gelu(ReferenceConv(conv1, x, w.w1, &w.b1).y);
  const ConvCase conv2{"conv2", {batch, kWidth, frames}, {kWidth, kWidth, 3}, true, 1, {2}, {}, {1, 1}};
  const ConvReferenceResult r2 = ReferenceConv(conv2, h, w.w2, &w.b2);
  const std::vector<double> y = gelu(r2.y);
  const int64_t out = r2.shape[2];
  std::vector<double> t(y.size());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < kWidth; ++c)
      for (int64_t f = 0; f < out; ++f) t[(n * out + f) * kWidth + c] = y[(n * kWidth + c) * out + f];
  *shape = {batch, out, kWidth};
  return t;
}

TEST(ConvGraphTest, WhisperFrontEndThroughASession) {
  const Weights w = MakeWeights();
  for (int threads : {1, 2}) {
    SessionOptions options;
    options.threads = threads;
    absl::StatusOr<std::unique_ptr<SessionImpl>> session = SessionImpl::Create(FrontEnd(w), options);
    ASSERT_TRUE(session.ok()) << session.status();
    // Both GELUs fused, both Convs kept; the declared output is [batch, ?, width].
    EXPECT_EQ(CountOps((*session)->graph(), "Conv"), 2);
    EXPECT_EQ(CountOps((*session)->graph(), "Gelu"), 2);
    const TensorInfo& out = (*session)->outputs()[0];
    ASSERT_TRUE(out.has_shape);
    ASSERT_EQ(out.shape.size(), 3u);
    EXPECT_EQ(out.shape_symbols[0], "batch");
    EXPECT_EQ(out.shape[1], -1);
    EXPECT_EQ(out.shape[2], kWidth);

    for (const auto& [batch, frames] : std::vector<std::pair<int64_t, int64_t>>{{1, 10}, {2, 7}, {3, 1}}) {
      SCOPED_TRACE(absl::StrCat(threads, " threads, batch ", batch, ", frames ", frames));
      const std::vector<int64_t> x_shape{batch, kMels, frames};
      const std::vector<double> x = Quantized(ElementType::kFloat32, x_shape, RandomValues(Count(x_shape), frames));
      std::vector<int64_t> want_shape;
      const std::vector<double> want = Reference(w, x, batch, frames, &want_shape);
      absl::StatusOr<NamedTensors> got =
          (*session)->Run({{"input_features", MakeTensor(ElementType::kFloat32, x_shape, x)}});
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(got->size(), 1u);
      const Tensor& y = (*got)[0].second;
      ASSERT_EQ(y.shape(), want_shape);
      const std::vector<double> values = ToDoubles(y);
      for (size_t i = 0; i < values.size(); ++i) ASSERT_NEAR(values[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << i;
    }
  }
}

// An input the Conv cannot take (no frames: the padded window is shorter
// than the kernel) fails at run time with one line naming the node and op,
// and the session goes on serving good inputs.
TEST(ConvGraphTest, BadInputIsOneLineNamingTheNode) {
  const Weights w = MakeWeights();
  absl::StatusOr<std::unique_ptr<SessionImpl>> session = SessionImpl::Create(FrontEnd(w), SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<int64_t> no_frames{1, kMels, 0};
  absl::StatusOr<NamedTensors> bad =
      (*session)->Run({{"input_features", *Tensor::Create(ElementType::kFloat32, no_frames)}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  const std::string message(bad.status().message());
  EXPECT_NE(message.find("'/conv1/Conv'"), std::string::npos) << message;
  EXPECT_NE(message.find("Conv"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  const std::vector<int64_t> good{1, kMels, 6};
  EXPECT_TRUE((*session)->Run({{"input_features", *Tensor::Create(ElementType::kFloat32, good)}}).ok());
}

}  // namespace
}  // namespace attune::testing
