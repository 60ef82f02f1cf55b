// A graph pass: a named rewrite with one entry point that says whether it changed anything.
#pragma once

#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "attune/fusion_report.h"
#include "core/ir/graph.h"
#include "engine/rewrite/subgraph_evaluator.h"
#include "ops/kernel.h"
#include "ops/registry.h"

namespace attune {

/// What every pass may use: the kernels (constant folding runs them), the
/// evaluator for cut-out subgraphs (mask proofs, verify mode), execution
/// options, the report to append to.
struct PassContext {
  const KernelRegistry* registry = nullptr;
  /// Set by the session to engine/exec's PlanEvaluator; no evaluator, no mask proofs.
  const SubgraphEvaluator* evaluator = nullptr;
  ExecOptions exec_options;
  FusionReport* report = nullptr;
  /// Verify each fusion numerically against the subgraph it replaces.
  bool verify_fusion = false;
  /// Upper bound on rewrites a fusion pass makes (bisecting a bad rewrite); < 0 = no bound.
  int max_rewrites = -1;
};

/// Appends a rejected candidate to `report` (when there is one) unless the
/// same one is there already: passes of a stage run several rounds.
inline void AddRejection(FusionReport* report, RejectedCandidate rejection) {
  if (report == nullptr) return;
  for (const RejectedCandidate& r : report->rejected)
    if (r.at == rejection.at && r.pattern == rejection.pattern && r.reason == rejection.reason) return;
  report->rejected.push_back(std::move(rejection));
}

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  /// Rewrites the graph; true if anything changed.
  virtual absl::StatusOr<bool> Run(Graph& graph, PassContext& context) = 0;
};

}  // namespace attune
