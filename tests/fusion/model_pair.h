// A model of models/ through the default pipeline twice, fused and unfused,
// to run both on inputs a test makes.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "importer/onnx_importer.h"
#include "ops/registry.h"
#include "tests/common/compare.h"
#include "tests/common/graph_builder.h"
#include "tests/common/paths.h"

namespace attune::testing {

struct ModelPair {
  std::unique_ptr<Graph> fused, unfused;
  FusionReport report;  // of the fused run
};

inline ModelPair LoadModelPair(const std::string& model) {
  ModelPair p;
  for (bool fuse : {true, false}) {
    auto graph = ImportModelFromFile((std::filesystem::path(SourceDir()) / "models" / model / "model.onnx").string());
    EXPECT_TRUE(graph.ok()) << graph.status();
    if (!graph.ok()) return p;
    PassContext context;
    context.registry = &DefaultKernelRegistry();
    context.evaluator = &DefaultSubgraphEvaluator();
    FusionReport report;
    context.report = &report;
    EXPECT_TRUE(DefaultPipeline(fuse)->Run(**graph, context).ok());
    (fuse ? p.fused : p.unfused) = *std::move(graph);
    if (fuse) p.report = report;
  }
  return p;
}

/// The largest difference over every output of two graphs run on `inputs`; 1e9 when either fails.
inline double OutputDifference(const Graph& a, const Graph& b, const std::vector<Tensor>& inputs) {
  auto want = RunGraph(a, DefaultKernelRegistry(), inputs);
  auto got = RunGraph(b, DefaultKernelRegistry(), inputs);
  EXPECT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(got.ok()) << got.status();
  if (!want.ok() || !got.ok()) return 1e9;
  double error = 0;
  for (size_t i = 0; i < want->size(); ++i) error = std::max(error, MaxAbsDifference((*want)[i], (*got)[i]));
  return error;
}

}  // namespace attune::testing
