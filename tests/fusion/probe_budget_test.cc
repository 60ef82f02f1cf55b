// The fusion's probes stay within a size budget: a model that declares a
// batch of 2^31 - 1 (so every probe input would be gigabytes) is not
// evaluated at that size. The mask proof gives up at once, with the budget
// as its reason, instead of allocating by the declared dim.
#include <filesystem>

#include "absl/strings/match.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "engine/passes/passes.h"
#include "gtest/gtest.h"
#include "importer/onnx_importer.h"
#include "ops/registry.h"
#include "tests/common/paths.h"

namespace attune {
namespace {

TEST(ProbeBudgetTest, DeclaredHugeBatchIsNotProbed) {
  const std::string path = testing::SourceDir() + "/models/gpt_maskfill/model.onnx";
  auto graph = ImportModelFromFile(path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  Value* ids = (*graph)->FindValue("input_ids");
  ASSERT_NE(ids, nullptr);
  ASSERT_TRUE(ids->shape().has_value() && ids->shape()->size() == 2);
  ids->set_type(ElementType::kBool);
  ids->set_shape(SymbolicShape{Dim::Known(2147483647), (*ids->shape())[1]});

  FusionReport report;
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = &report;
  const absl::Status s = DefaultPipeline(true)->Run(**graph, context);
  ASSERT_TRUE(s.ok()) << s;

  const std::string budget = absl::StrCat("exceeds the size limit of ", kFusionProbeMaxTensorBytes, " bytes");
  int over_budget = 0;
  for (const RejectedCandidate& r : report.rejected) {
    SCOPED_TRACE(r.reason);
    if (absl::StrContains(r.reason, budget)) ++over_budget;
  }
  EXPECT_GT(over_budget, 0) << "no candidate names the probe budget";
  // No causal fusion rests on a proof that never ran.
  for (const FusionRecord& f : report.fusions) EXPECT_FALSE(f.causal) << f.node;
}

}  // namespace
}  // namespace attune
