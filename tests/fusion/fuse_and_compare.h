// Runs the default pipeline with fusion on a graph, and the fused and the
// original graph on the same inputs: the report and the largest difference
// over every output.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <memory>
#include <vector>

#include "attune/fusion_report.h"
#include "core/ir/graph.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "importer/attention_export.h"
#include "importer/onnx_importer.h"
#include "ops/registry.h"
#include "tests/common/compare.h"
#include "tests/common/graph_builder.h"
#include "tests/common/paths.h"

namespace attune::testing {

struct FusedComparison {
  FusionReport report;
  double error = 1e9;  // max |fused - original| over every output; 1e9 when either run fails
};

/// The default pipeline with fusion on `graph`, reporting into `report`.
inline std::unique_ptr<Graph> FusedGraph(std::unique_ptr<Graph> graph, FusionReport* report = nullptr) {
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = report;
  EXPECT_TRUE(DefaultPipeline(true)->Run(*graph, context).ok());
  return graph;
}

/// Every output of the two graphs on `inputs` holds the same numbers, NaN
/// where the other has NaN: for fused ops that give their subgraph's bits.
inline void ExpectSameOutputs(const Graph& a, const Graph& b, const std::vector<Tensor>& inputs) {
  auto want = RunGraph(a, DefaultKernelRegistry(), inputs);
  auto got = RunGraph(b, DefaultKernelRegistry(), inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(want->size(), got->size());
  for (size_t o = 0; o < want->size(); ++o)
    EXPECT_EQ(CompareTensors((*got)[o], (*want)[o], Tolerance{0.0, 0.0}), "") << "output " << o;
}

/// `graph` written as --save-optimized writes it and imported again; nullptr
/// (and a test failure) when either step fails.
inline std::unique_ptr<Graph> ExportedAndReread(const Graph& graph, const std::string& file_name) {
  const std::string path = BinaryDir() + "/" + file_name;
  const absl::Status written = ExportOptimizedModelToFile(graph, path);
  EXPECT_TRUE(written.ok()) << written;
  auto reread = ImportModelFromFile(path);
  std::filesystem::remove(path);
  EXPECT_TRUE(reread.ok()) << reread.status();
  if (!written.ok() || !reread.ok()) return nullptr;
  return std::move(*reread);
}

inline FusedComparison FuseAndCompare(std::unique_ptr<Graph> graph, const std::vector<Tensor>& inputs) {
  FusedComparison r;
  auto original = graph->Clone();
  graph = FusedGraph(std::move(graph), &r.report);
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
