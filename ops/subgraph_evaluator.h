// How code below the executor evaluates a graph without knowing it: a pass
// proving a mask or verifying a rewrite, and the control-flow kernels running
// If's branches and Loop's and Scan's body. engine/exec implements this
// (PlanEvaluator); the session hands it to the passes in PassContext and the
// plan hands it to a kernel whose node has subgraphs (KernelInfo).
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/graph.h"
#include "ops/kernel.h"

namespace attune {

/// A graph prepared once, to be evaluated many times (at several probe sizes,
/// or once per loop iteration).
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
