// Runs the ONNX backend node tests of the shape family through the kernel registry.
#include <gtest/gtest.h>

#include "tests/common/kernel_runner.h"
#include "tests/common/paths.h"
#include "tests/ops/backend_node_loader.h"

namespace attune::testing {
namespace {

class ShapeBackendTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ShapeBackendTest, MatchesReference) {
  ATTUNE_SKIP_PLACEHOLDER_CASE(GetParam());
  auto c = LoadBackendNodeCase(BackendNodeDir() + "/" + GetParam());
  ASSERT_TRUE(c.ok()) << c.status();
  KernelCall call;
  call.op_type = c->op_type;
  call.opset = c->opset;
  call.attributes = c->attributes;
  call.inputs = c->inputs;
  call.num_outputs = static_cast<int>(c->expected.size());
  auto out = RunKernel(call);
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t i = 0; i < c->expected.size(); ++i)
    EXPECT_EQ(CompareTensors((*out)[i], c->expected[i]), "") << "output " << i;
}

// Training-mode dropout with a non-zero ratio is random: not an inference result.
INSTANTIATE_TEST_SUITE_P(
    Onnx, ShapeBackendTest,
    ::testing::ValuesIn(BackendTestsFor(
        {"Reshape", "Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "Unsqueeze", "Squeeze",
         "Shape", "Size", "ConstantOfShape", "Range", "Expand", "Trilu", "Tile", "Flatten", "Identity", "Dropout",
         "Constant"},
        {"test_training_dropout", "test_training_dropout_default", "test_training_dropout_default_mask",
         "test_training_dropout_mask"})),
    [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace attune::testing
