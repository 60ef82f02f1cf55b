// Runs the default pipeline with fusion on a graph, and the fused and the
// original graph on the same inputs: the report and the largest difference
// over every output.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "attune/fusion_report.h"
#include "core/ir/graph.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/common/compare.h"
#include "tests/common/graph_builder.h"

namespace attune::testing {

struct FusedComparison {
  FusionReport report;
  double error = 1e9;  // max |fused - original| over every output; 1e9 when either run fails
};

inline FusedComparison FuseAndCompare(std::unique_ptr<Graph> graph, const std::vector<Tensor>& inputs) {
  FusedComparison r;
  auto original = graph->Clone();
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = &r.report;
  absl::Status s = DefaultPipeline(true)->Run(*graph, context);
  EXPECT_TRUE(s.ok()) << s;
  auto want = RunGraph(*original, DefaultKernelRegistry(), inputs);
  auto got = RunGraph(*graph, DefaultKernelRegistry(), inputs);
  EXPECT_TRUE(want.ok() && got.ok());
  if (want.ok() && got.ok()) {
    r.error = 0;
    for (size_t i = 0; i < want->size(); ++i) r.error = std::max(r.error, MaxAbsDifference((*want)[i], (*got)[i]));
  }
  return r;
}

}  // namespace attune::testing
