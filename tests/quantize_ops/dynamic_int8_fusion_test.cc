// The dynamic-int8 fusion on files quantize_dynamic_writer.py wrote (int8 per
// tensor, int8 and uint8 per column; one activation quantized once for two
// products): fused against unfused bit for bit, both against ONNX Runtime's
// outputs on the same files, and --save-optimized writing the subgraphs back.
#include <string>

#include "engine/io/npy.h"
#include "gtest/gtest.h"
#include "tests/common/compare.h"
#include "tests/fusion/fuse_and_compare.h"

namespace attune::testing {
namespace {

std::string DataDir() { return SourceDir() + "/tests/quantize_ops/data"; }

int CountOps(const Graph& g, const std::string& domain, const std::string& op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->domain() == domain && node->op_type() == op;
  return n;
}

class DynamicInt8FusionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DynamicInt8FusionTest, FusedEqualsUnfusedAndOnnxRuntime) {
  const std::string name = GetParam();
  auto model = ImportModelFromFile(DataDir() + "/mlp_" + name + ".onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  auto x = ReadNpyFile(DataDir() + "/inputs/x.npy");
  ASSERT_TRUE(x.ok()) << x.status();
  const std::vector<Tensor> inputs = {*x};
  std::unique_ptr<Graph> original = (*model)->Clone();
  FusionReport report;
  std::unique_ptr<Graph> fused = FusedGraph(std::move(*model), &report);
  EXPECT_EQ(CountOps(*fused, "attune", "DynamicQuantizeMatMul"), 3);
  EXPECT_EQ(CountOps(*fused, "", "MatMulInteger"), 0);
  EXPECT_EQ(CountOps(*fused, "", "DynamicQuantizeLinear"), 0);
  int bias_folded = 0;
  for (const OpFusionRecord& r : report.op_fusions)
    if (r.pattern == "dynamic_int8_product") bias_folded += r.attributes.find(" bias") != std::string::npos;
  EXPECT_EQ(bias_folded, 2);
  ExpectSameOutputs(*original, *fused, inputs);

  auto got = RunGraph(*fused, DefaultKernelRegistry(), inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  auto ort = ReadNpyFile(DataDir() + "/ort_" + name + "/y.npy");
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(CompareTensors((*got)[0], *ort, Tolerance{1e-5, 1e-5}), "");

  std::unique_ptr<Graph> exported = ExportedAndReread(*fused, "dynamic_int8_" + name + ".onnx");
  ASSERT_NE(exported, nullptr);
  EXPECT_EQ(CountOps(*exported, "attune", "DynamicQuantizeMatMul"), 0);
  EXPECT_EQ(CountOps(*exported, "", "MatMulInteger"), 3);
  ExpectSameOutputs(*original, *exported, inputs);
}

INSTANTIATE_TEST_SUITE_P(Layouts, DynamicInt8FusionTest,
                         ::testing::Values("int8_tensor", "int8_channel", "uint8_channel"));

}  // namespace
}  // namespace attune::testing
