// How a pass evaluates a graph it cut out or cloned (a mask to prove, a rewrite
// to verify) without knowing the executor: engine/exec implements this
// (PlanEvaluator) and the session hands it to the passes in PassContext.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/graph.h"
#include "ops/kernel.h"

namespace attune {

/// A graph prepared once, to be evaluated many times (at several probe sizes).
class PreparedSubgraph {
 public:
  virtual ~PreparedSubgraph() = default;
  /// Runs on inputs in graph-input order; returns outputs in graph-output order.
  virtual absl::StatusOr<std::vector<Tensor>> Evaluate(std::vector<Tensor> inputs) const = 0;
};

class SubgraphEvaluator {
 public:
  virtual ~SubgraphEvaluator() = default;
  /// Prepares a kernel for every node of `graph`; fails naming the node when
  /// an op is unsupported or its attributes are invalid.
  virtual absl::StatusOr<std::unique_ptr<PreparedSubgraph>> Prepare(const Graph& graph,
                                                                   const ExecOptions& options) const = 0;
};

}  // namespace attune
