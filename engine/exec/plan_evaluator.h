// The executor behind the passes' SubgraphEvaluator: a cut-out or cloned
// graph is compiled into a Plan and run like a model.
#pragma once

#include <memory>

#include "engine/rewrite/subgraph_evaluator.h"
#include "ops/registry.h"

namespace attune {

class PlanEvaluator final : public SubgraphEvaluator {
 public:
  explicit PlanEvaluator(const KernelRegistry& registry) : registry_(&registry) {}
  absl::StatusOr<std::unique_ptr<PreparedSubgraph>> Prepare(const Graph& graph,
                                                           const ExecOptions& options) const override;

 private:
  const KernelRegistry* registry_;
};

/// A PlanEvaluator over DefaultKernelRegistry().
const SubgraphEvaluator& DefaultSubgraphEvaluator();

}  // namespace attune
