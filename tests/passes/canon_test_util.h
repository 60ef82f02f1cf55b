// Shared by the canonicalisation pass tests: run one pass, read shapes.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "core/ir/graph.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass.h"
#include "ops/registry.h"

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

inline std::string ShapeOf(const Value* v) {
  return v->shape() ? SymbolicShapeToString(*v->shape()) : std::string("unknown rank");
}

}  // namespace attune::testing
