// The optimiser as a session runs it: the pass pipeline, and for a decoder
// whose inputs name the mask's length apart from the cache's and the tokens'
// a second run under their relation (dim_assumptions.h), kept when it fuses
// more blocks or more with a structural mask.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/fusion_report.h"
#include "attune/session.h"
#include "core/ir/graph.h"
#include "engine/dim_assumptions.h"

namespace attune {

struct OptimisedGraph {
  std::unique_ptr<Graph> graph;  // what to compile
  FusionReport report;           // of `graph`; report.assumptions lists `assumptions`
  std::vector<DimAssumption> assumptions;
  /// The graph optimised without the assumptions (for runs that break one);
  /// null when there are none.
  std::unique_ptr<Graph> unspecialised;
};

/// Runs the pipeline `options` asks for (fuse, disabled passes, stop-after,
/// verify mode) on `graph`.
absl::StatusOr<OptimisedGraph> OptimiseGraph(std::unique_ptr<Graph> graph, const SessionOptions& options);

}  // namespace attune
