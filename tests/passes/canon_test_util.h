// Shared by the canonicalisation pass tests: run one pass, read shapes.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "core/ir/graph.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass.h"
#include "ops/registry.h"
#include "tests/common/graph_builder.h"

namespace attune::testing {

/// Runs `pass` once with the default kernel registry and verifies the graph.
inline absl::StatusOr<bool> RunPass(Pass& pass, Graph& graph) {
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  auto changed = pass.Run(graph, context);
  if (!changed.ok()) return changed;
  absl::Status verified = graph.Verify();
  if (!verified.ok()) return verified;
  return changed;
}

/// Runs `pass` once (with `report`, when given) and checks that the graph's
/// outputs on `inputs` keep their shapes and elements: NaN where NaN was, every
/// other element within `tolerance` (an infinity only equal to itself). Returns whether the pass changed the graph.
inline bool RunPassKeepingOutputs(Pass& pass, Graph& graph, const std::vector<Tensor>& inputs, double tolerance,
                                  FusionReport* report = nullptr) {
  auto original = graph.Clone();
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = report;
  auto changed = pass.Run(graph, context);
  EXPECT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(graph.Verify().ok());
  auto before = RunGraph(*original, DefaultKernelRegistry(), inputs);
  auto after = RunGraph(graph, DefaultKernelRegistry(), inputs);
  EXPECT_TRUE(before.ok()) << before.status();
  EXPECT_TRUE(after.ok()) << after.status();
  if (before.ok() && after.ok()) {
    EXPECT_EQ(before->size(), after->size());
    for (size_t i = 0; i < before->size() && i < after->size(); ++i) {
      const Tensor& x = (*before)[i];
      const Tensor& y = (*after)[i];
      EXPECT_EQ(x.shape(), y.shape());
      if (x.shape() != y.shape()) continue;
      for (int64_t e = 0; e < x.num_elements(); ++e) {
        const float a = x.data<float>()[e], b = y.data<float>()[e];
        if (std::isnan(a))
          EXPECT_TRUE(std::isnan(b)) << "output " << i << " element " << e;
        else if (a != b)  // infinities equal or not at all
          EXPECT_NEAR(a, b, tolerance) << "output " << i << " element " << e;
      }
    }
  }
  return changed.ok() && *changed;
}

/// The built graph with its shapes inferred.
inline std::unique_ptr<Graph> BuildWithShapes(GraphBuilder& b, Pass& shape_inference) {
  auto graph = b.Build();
  auto shapes = RunPass(shape_inference, *graph);
  if (!shapes.ok()) ADD_FAILURE() << shapes.status();
  return graph;
}

/// The dims of a value whose shape is static.
inline std::vector<int64_t> StaticDims(const Value* v) {
  std::vector<int64_t> dims;
  for (const Dim& d : *v->shape()) dims.push_back(d.value());
  return dims;
}

inline std::string ShapeOf(const Value* v) {
  return v->shape() ? SymbolicShapeToString(*v->shape()) : std::string("unknown rank");
}

}  // namespace attune::testing
