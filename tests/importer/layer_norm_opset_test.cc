// LayerNormalization below opset 17, as ONNX Runtime's transformer optimizer
// writes it (default domain, opsets 11-16): the model runs with opset 17's
// meaning, giving the same outputs as the same model at 17.
#include <cmath>
#include <vector>

#include "attune/session.h"
#include "gtest/gtest.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

constexpr int64_t kRows = 3, kWidth = 8;

// x [rows, 8] -> LayerNormalization(axis -1, epsilon 1e-5) with scale and bias,
// all three outputs.
onnx::ModelProto LayerNormModel(int64_t opset) {
  onnx::ModelProto m = MinimalModel(opset);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {int64_t{kRows}, int64_t{kWidth}});
  std::vector<float> scale(kWidth), bias(kWidth);
  for (int64_t i = 0; i < kWidth; ++i) {
    scale[i] = 0.5f + 0.25f * static_cast<float>(i);
    bias[i] = 0.1f * static_cast<float>(i) - 0.3f;
  }
  AddInitializer(m, "scale", onnx::TensorProto::FLOAT, {kWidth})->set_raw_data(RawBytes(scale));
  AddInitializer(m, "bias", onnx::TensorProto::FLOAT, {kWidth})->set_raw_data(RawBytes(bias));
  auto* ln = AddNode(m, "LayerNormalization", {"x", "scale", "bias"}, {"y", "mean", "inv_std"}, "ln");
  AddAttribute(ln, "axis", onnx::AttributeProto::INT)->set_i(-1);
  AddAttribute(ln, "epsilon", onnx::AttributeProto::FLOAT)->set_f(1e-5f);
  AddOutput(m, "y", onnx::TensorProto::FLOAT, {int64_t{kRows}, int64_t{kWidth}});
  AddOutput(m, "mean", onnx::TensorProto::FLOAT, {int64_t{kRows}, int64_t{1}});
  AddOutput(m, "inv_std", onnx::TensorProto::FLOAT, {int64_t{kRows}, int64_t{1}});
  return m;
}

Tensor Input() {
  std::vector<float> x(kRows * kWidth);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * static_cast<float>(i)) * 3.0f + 1.0f;
  return *Tensor::FromVector<float>({kRows, kWidth}, x);
}

absl::StatusOr<NamedTensors> RunAtOpset(int64_t opset) {
  auto session = Session::CreateFromBytes(Serialize(LayerNormModel(opset)));
  if (!session.ok()) return session.status();
  return (*session)->Run({{"x", Input()}});
}

std::vector<float> Floats(const Tensor& t) {
  auto v = t.values<float>();
  return std::vector<float>(v.begin(), v.end());
}

TEST(LayerNormOpsetTest, Opset17MatchesAPlainComputation) {
  auto out = RunAtOpset(17);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  const std::vector<float> x = Floats(Input());
  const std::vector<float> y = Floats((*out)[0].second);
  for (int64_t r = 0; r < kRows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < kWidth; ++i) mean += x[r * kWidth + i];
    mean /= kWidth;
    for (int64_t i = 0; i < kWidth; ++i) var += (x[r * kWidth + i] - mean) * (x[r * kWidth + i] - mean);
    var /= kWidth;
    const double inv_std = 1.0 / std::sqrt(var + 1e-5);
    EXPECT_NEAR((*out)[1].second.values<float>()[r], mean, 1e-5);
    EXPECT_NEAR((*out)[2].second.values<float>()[r], inv_std, 1e-5);
    for (int64_t i = 0; i < kWidth; ++i) {
      const double want = (x[r * kWidth + i] - mean) * inv_std * (0.5 + 0.25 * i) + (0.1 * i - 0.3);
      EXPECT_NEAR(y[r * kWidth + i], want, 1e-5) << r << "," << i;
    }
  }
}

TEST(LayerNormOpsetTest, OlderOpsetsGiveTheOpset17Result) {
  auto want = RunAtOpset(17);
  ASSERT_TRUE(want.ok()) << want.status();
  for (int64_t opset : {11, 13, 16}) {
    auto got = RunAtOpset(opset);
    ASSERT_TRUE(got.ok()) << "opset " << opset << ": " << got.status();
    ASSERT_EQ(got->size(), want->size());
    for (size_t o = 0; o < got->size(); ++o) {
      EXPECT_EQ((*got)[o].first, (*want)[o].first);
      EXPECT_EQ(Floats((*got)[o].second), Floats((*want)[o].second)) << "opset " << opset << " output " << o;
    }
  }
}

}  // namespace
}  // namespace attune::testing
