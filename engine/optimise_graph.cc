#include "engine/optimise_graph.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "core/common/status_macros.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "engine/session_impl.h"
#include "ops/registry.h"

namespace attune {
namespace {

absl::Status Optimise(Graph& graph, const SessionOptions& options, FusionReport& report) {
  report.ops_before = OpHistogram(graph);
  std::unique_ptr<PassManager> pipeline = DefaultPipeline(options.fuse, options.weights);
  for (const std::string& name : options.disabled_passes) RETURN_IF_ERROR(pipeline->Disable(name));
  if (!options.stop_after_pass.empty()) RETURN_IF_ERROR(pipeline->StopAfter(options.stop_after_pass));
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  const PlanEvaluator evaluator(DefaultKernelRegistry());
  context.evaluator = &evaluator;
  context.exec_options = ToExecOptions(options);
  context.report = &report;
  context.verify_fusion = options.verify_fusion;
  RETURN_IF_ERROR(pipeline->Run(graph, context));
  report.ops_after = OpHistogram(graph);
  return absl::OkStatus();
}

bool RejectedAttention(const FusionReport& report) {
  return std::any_of(report.rejected.begin(), report.rejected.end(),
                     [](const RejectedCandidate& r) { return absl::StartsWith(r.pattern, "attention"); });
}

// Fused blocks, then those among them with a structural mask (an explicit
// mask keeps the T x T scores in memory): more of either is better.
std::pair<size_t, size_t> FusionScore(const FusionReport& report) {
  size_t structural = 0;
  for (const FusionRecord& f : report.fusions) structural += f.mask != "explicit" && !f.undone;
  return {report.fusions.size(), structural};
}

}  // namespace

absl::StatusOr<OptimisedGraph> OptimiseGraph(std::unique_ptr<Graph> graph, const SessionOptions& options) {
  OptimisedGraph out;
  std::vector<DimAssumption> assumptions;
  std::unique_ptr<Graph> specialised;
  if (options.fuse) assumptions = FindDecoderDimAssumptions(*graph);
  if (!assumptions.empty()) specialised = graph->Clone();
  RETURN_IF_ERROR(Optimise(*graph, options, out.report));
  // Only a graph with a block left unfused, or fused with an explicit mask,
  // can gain from the relation: others are optimised once.
  if (specialised != nullptr && RejectedAttention(out.report)) {
    ApplyDimAssumptions(assumptions, *specialised);
    FusionReport report;
    RETURN_IF_ERROR(Optimise(*specialised, options, report));
    if (FusionScore(report) > FusionScore(out.report)) {
      for (const DimAssumption& a : assumptions) report.assumptions.push_back(a.ToString());
      out.report = std::move(report);
      out.assumptions = std::move(assumptions);
      out.unspecialised = std::move(graph);
      graph = std::move(specialised);
    }
  }
  out.graph = std::move(graph);
  return out;
}

}  // namespace attune
