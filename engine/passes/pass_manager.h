// Runs passes in stages: each stage repeats its passes until none changes the graph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "attune/session.h"
#include "engine/passes/pass.h"

namespace attune {

class PassManager {
 public:
  /// Adds a stage: its passes run in order, repeatedly, to a fixed point.
  /// A stage runs its passes in order until none changes the graph, at most
  /// `max_iterations` times (a guard against passes that undo each other).
  void AddStage(std::string stage_name, std::vector<std::unique_ptr<Pass>> passes, int max_iterations = 16);
  /// Skips a pass by name; NotFound (listing the passes) if no stage has it.
  absl::Status Disable(const std::string& pass_name);
  /// Ends Run after the first run of this pass, leaving the graph as that
  /// pass left it (to see what the pipeline did up to there); NotFound
  /// (listing the passes) if no stage has it.
  absl::Status StopAfter(const std::string& pass_name);
  /// Pass names in pipeline order.
  std::vector<std::string> PassNames() const;
  /// Runs every stage; verifies the graph after each pass; errors carry the
  /// pass name. A stage still changing the graph in its last allowed round
  /// is not an error, but it is logged as a warning and listed in
  /// context.report's iteration_cap_hit.
  absl::Status Run(Graph& graph, PassContext& context) const;

 private:
  struct Stage {
    std::string name;
    std::vector<std::unique_ptr<Pass>> passes;
    int max_iterations = 16;
  };
  bool Has(const std::string& pass_name) const;
  absl::Status NoSuchPass(const std::string& pass_name) const;

  std::vector<Stage> stages_;
  absl::flat_hash_set<std::string> disabled_;
  std::string stop_after_;
};

/// The default pipeline: Simplify (constant folding, shape inference and folding,
/// CSE, DCE), then Fuse (attention, then activations and norms; only when
/// `fuse`), then a final clean-up.
std::unique_ptr<PassManager> DefaultPipeline(bool fuse);
/// The same with the weights of products compressed as `weights` says (the
/// stage "compress_weights" after the op fusions, before the products take
/// their epilogues; DefaultPipeline(fuse) runs it without compression, which
/// takes only 16-bit weights behind a Cast).
std::unique_ptr<PassManager> DefaultPipeline(bool fuse, const WeightCompressionOptions& weights);

/// Counts live nodes per op type; fused attention counts as "MultiHeadAttention".
std::map<std::string, int> OpHistogram(const Graph& graph);

}  // namespace attune
