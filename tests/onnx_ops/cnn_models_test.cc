// Two CNNs exported by torch from torchvision's definitions (random weights,
// models/gen/cnn_models.py --small): ResNet-50's structure with its
// BatchNormalizations kept as nodes, and MobileNetV3-Large at width 0.25.
// Attune's outputs, fused (BatchNorms folded into the Convs) and unfused,
// match ONNX Runtime's on the same file and input, on 1 and 2 threads.
#include <cmath>
#include <filesystem>
#include <string>

#include "attune/session.h"
#include "engine/io/npy.h"
#include "gtest/gtest.h"
#include "tests/common/compare.h"
#include "tests/common/paths.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

class CnnModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CnnModelTest, MatchesOnnxRuntime) {
  const fs::path dir = fs::path(testing::SourceDir()) / "tests" / "onnx_ops" / "data" / GetParam();
  auto input = ReadNpyFile((dir / "inputs" / "input.npy").string());
  auto expected = ReadNpyFile((dir / "outputs" / "logits.npy").string());
  ASSERT_TRUE(input.ok() && expected.ok());
  double largest = 0;
  for (float v : expected->values<float>()) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  for (bool fuse : {false, true})
    for (int threads : {1, 2}) {
      SessionOptions options;
      options.fuse = fuse;
      options.threads = threads;
      auto session = Session::Create((dir / "model.onnx").string(), options);
      ASSERT_TRUE(session.ok()) << session.status();
      auto outputs = (*session)->Run({{"input", *input}});
      ASSERT_TRUE(outputs.ok()) << outputs.status();
      ASSERT_EQ(outputs->size(), 1u);
      // Sums of hundreds of products in a different order: 1e-3 of the largest logit.
      const double error = testing::MaxAbsDifference((*outputs)[0].second, *expected);
      EXPECT_LE(error, 1e-3 * largest + 1e-6) << GetParam() << " fuse " << fuse << " threads " << threads;
    }
}

INSTANTIATE_TEST_SUITE_P(TorchvisionShapes, CnnModelTest, ::testing::Values("resnet50_small", "mobilenet_v3_small"));

}  // namespace
}  // namespace attune
