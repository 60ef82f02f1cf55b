// Verify mode: runs the graph with and without one planned fusion on random
// inputs (symbolic dims bound to small sizes) and measures how far the fused
// outputs are from the values they replace.
#pragma once

#include "absl/status/statusor.h"
#include "engine/ir/graph.h"
#include "engine/passes/attention/fusion_plan.h"
#include "ops/kernel.h"
#include "ops/registry.h"

namespace attune::attention {

struct VerifyErrors {
  double max_abs = 0.0;
  double max_rel = 0.0;
};

/// Errors of every replaced value; an error status when the comparison cannot
/// run (unknown input shapes, a kernel failure).
absl::StatusOr<VerifyErrors> VerifyFusionPlan(const Graph& graph, const FusionPlan& plan,
                                              const KernelRegistry& registry, const ExecOptions& options);

}  // namespace attune::attention
