// The ONNX backend tests test_attention_*_expanded*: ONNX Attention written
// out op by op by the function body. Each must either fuse or be reported
// with a reason, and the optimised graph must match the expected outputs.
#include <filesystem>
#include <iostream>
#include <set>

#include "absl/strings/str_join.h"

#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "importer/onnx_importer.h"
#include "ops/registry.h"
#include "tests/common/backend_index.h"
#include "tests/common/compare.h"
#include "tests/common/paths.h"
#include "tests/common/graph_builder.h"
#include "tests/common/onnx_test_case.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> ExpandedAttentionTests() {
  std::vector<std::string> out;
  for (const std::string& name : testing::ListBackendTests("test_attention_"))
    if (name.find("_expanded") != std::string::npos) out.push_back(name);
  return out;
}

std::vector<Tensor> ReadPbs(const fs::path& dir, const std::string& prefix, size_t count) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < count; ++i) {
    auto t = testing::LoadTensorProtoFile((dir / (prefix + std::to_string(i) + ".pb")).string());
    EXPECT_TRUE(t.ok()) << t.status();
    out.push_back(t.ok() ? *t : Tensor());
  }
  return out;
}

class BackendExpandedTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BackendExpandedTest, FusesOrExplainsAndMatchesExpectedOutputs) {
  ATTUNE_SKIP_PLACEHOLDER_CASE(GetParam());
  const fs::path dir = fs::path(testing::BackendTestRoot()) / GetParam();
  auto graph = ImportModelFromFile((dir / "model.onnx").string());
  ASSERT_TRUE(graph.ok()) << graph.status();
  // Only a missing kernel is a reason to skip, and it is known before anything runs:
  // an Unimplemented error from a kernel the registry has is a failure.
  std::set<std::string> missing;
  for (const Node* n : (*graph)->nodes())
    if (!DefaultKernelRegistry().Supports(n->domain(), n->op_type(), (*graph)->OpsetFor(n->domain())))
      missing.insert(n->op_type());
  if (!missing.empty()) GTEST_SKIP() << "the graph needs kernels Attune lacks: " << absl::StrJoin(missing, ", ");
  // The attention candidate is the graph's Softmax: a miss must be explained there.
  std::set<std::string> softmax_nodes;
  for (const Node* n : (*graph)->nodes())
    if (n->op_type() == "Softmax") softmax_nodes.insert(n->name());
  ASSERT_EQ(softmax_nodes.size(), 1u) << "an expanded attention test has one Softmax";
  FusionReport report;
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = &report;
  context.verify_fusion = true;
  ASSERT_TRUE(DefaultPipeline(true)->Run(**graph, context).ok());

  int fused = 0;
  for (const FusionRecord& f : report.fusions) {
    std::cout << "  fused " << f.pattern << " mask=" << f.mask << " heads=" << f.num_heads << "/" << f.kv_num_heads
              << " layout=" << f.q_layout << " past=" << f.has_past << " verify=" << f.verify_max_abs_error.value_or(-1)
              << (f.undone ? " UNDONE" : "") << "\n";
    fused += f.undone ? 0 : 1;
  }
  for (const RejectedCandidate& r : report.rejected) std::cout << "  rejected " << r.pattern << ": " << r.reason << "\n";
  EXPECT_EQ(testing::CountOps(**graph, "MultiHeadAttention"), fused);
  bool explained = false;
  for (const RejectedCandidate& r : report.rejected) explained |= softmax_nodes.count(r.at) > 0;
  EXPECT_TRUE(fused == 1 || explained) << "neither fused nor explained at " << *softmax_nodes.begin();
  EXPECT_EQ(testing::CountOps(**graph, "Softmax"), 1 - fused);

  size_t num_inputs = 0;
  for (const Value* in : (*graph)->inputs()) num_inputs += in->is_constant() ? 0 : 1;
  const fs::path data = dir / "test_data_set_0";
  auto outputs = testing::RunGraph(**graph, DefaultKernelRegistry(), ReadPbs(data, "input_", num_inputs));
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  const std::vector<Tensor> expected = ReadPbs(data, "output_", outputs->size());
  for (size_t i = 0; i < outputs->size(); ++i)
    EXPECT_EQ(testing::CompareTensors((*outputs)[i], expected[i], {1e-3, 1e-5}), "") << "output " << i;
}

INSTANTIATE_TEST_SUITE_P(Onnx, BackendExpandedTest, ::testing::ValuesIn(testing::CasesOrPlaceholder(ExpandedAttentionTests())),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace attune
