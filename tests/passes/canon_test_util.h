// Shared by the canonicalisation pass tests: run one pass, read shapes.
#pragma once

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
