// Runs passes in stages: each stage repeats its passes until none changes the graph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "engine/passes/pass.h"

namespace attune {

class PassManager {
 public:
  /// Adds a stage: its passes run in order, repeatedly, to a fixed point.
  /// A stage runs its passes in order until none changes the graph, at most
  /// `max_iterations` times (a guard against passes that undo each other).
  void AddStage(std::string stage_name, std::vector<std::unique_ptr<Pass>> passes, int max_iterations = 16);
  /// Skips a pass by name; NotFound if no stage has it.
  absl::Status Disable(const std::string& pass_name);
  /// Pass names in pipeline order.
  std::vector<std::string> PassNames() const;
  /// Runs every stage; verifies the graph after each pass; errors carry the pass name.
  absl::Status Run(Graph& graph, PassContext& context) const;

 private:
  struct Stage {
    std::string name;
    std::vector<std::unique_ptr<Pass>> passes;
    int max_iterations = 16;
  };
  std::vector<Stage> stages_;
  absl::flat_hash_set<std::string> disabled_;
};

/// The default pipeline: Simplify (constant folding, shape inference and folding,
/// CSE, DCE), then Fuse (attention; only when `fuse`), then a final clean-up.
std::unique_ptr<PassManager> DefaultPipeline(bool fuse);

/// Counts live nodes per op type; fused attention counts as "MultiHeadAttention".
std::map<std::string, int> OpHistogram(const Graph& graph);

}  // namespace attune
