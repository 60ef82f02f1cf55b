// Runs the ONNX backend node tests of the reduce family through the kernel registry.
#include <gtest/gtest.h>

#include "tests/common/kernel_runner.h"
#include "tests/common/paths.h"
#include "tests/ops/backend_node_loader.h"

namespace attune::testing {
namespace {

class ReduceBackendTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReduceBackendTest, MatchesReference) {
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

INSTANTIATE_TEST_SUITE_P(
    Onnx, ReduceBackendTest,
    ::testing::ValuesIn(BackendTestsFor({"Softmax", "LogSoftmax", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                                         "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
                                         "ReduceLogSumExp", "ArgMax", "ArgMin", "CumSum"},
                                        {})),
    [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace attune::testing
