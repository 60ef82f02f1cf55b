// A value that depends only on tensor shapes and constants (a causal mask, a
// reshape target), cut out of its graph into a small Graph whose inputs are
// the tensors whose shapes it reads, so it can be evaluated at any sizes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/graph.h"
#include "engine/rewrite/dim_binding.h"
#include "engine/rewrite/subgraph_evaluator.h"

namespace attune {

/// Values whose data a cut reads as inputs of its own (not only their shapes).
struct CutValues {
  /// These values end the walk; their data is given to Evaluate.
  std::vector<const Value*> values;
  /// Graph inputs the walk reaches through their data become value inputs
  /// too (after `values`), instead of a FailedPrecondition.
  bool graph_inputs = false;
};

/// A dim with each symbol name replaced by its index in `symbols` (appended
/// on first appearance), numbers kept: "past+seq" and "p+s" read alike when
/// p, s come in the same order, "12*seq" and "3*seq" do not.
/// ShapeSubgraph::Fingerprint spells shapes this way.
std::string RenamedDim(const Dim& d, std::vector<std::string>& symbols);

class ShapeSubgraph {
 public:
  /// Walks back from `root`: through any node, stopping at constants and at
  /// the inputs of Shape and Size nodes (the shape sources). Reaching a graph
  /// input's values (other than through Shape/Size) or a random op is a
  /// FailedPrecondition whose message says which tensor was reached.
  static absl::StatusOr<ShapeSubgraph> Cut(const Graph& graph, const Value* root, int max_nodes = 400);
  /// As above, and the walk also ends at `values`: their data are inputs of
  /// the cut (value_sources(), given to Evaluate in that order).
  static absl::StatusOr<ShapeSubgraph> Cut(const Graph& graph, const Value* root, const CutValues& values,
                                           int max_nodes = 400);

  /// The tensors whose data the value reads, in the order Evaluate takes them.
  const std::vector<const Value*>& value_sources() const { return value_sources_; }

  /// The tensors whose shapes the value reads, in the cut graph's input order.
  const std::vector<const Value*>& sources() const { return sources_; }
  /// Largest dim of any constant a Slice in the cut reads as its data (0 if none):
  /// the length of a mask buffer.
  int64_t sliced_buffer_length() const { return sliced_buffer_length_; }
  /// A text that two cuts share exactly when they compute the same thing:
  /// the ops, attributes and wiring in order, every constant's type, shape
  /// and bytes, and the sources' shapes with their symbols renamed in order
  /// of appearance (`symbols` lists the original names by that order; the
  /// caller appends its own symbols to the list to rename them too). The
  /// layers of a decoder give one text, so a proof of one serves them all.
  std::string Fingerprint(std::vector<std::string>& symbols) const;
  /// Nodes of the original graph inside the cut.
  const std::vector<const Node*>& nodes() const { return nodes_; }

  /// Evaluates the value with zero tensors of the sources' shapes under `binding`.
  /// InvalidArgument when a source's shape cannot be evaluated.
  absl::StatusOr<Tensor> Evaluate(const DimBinding& binding, const SubgraphEvaluator& evaluator,
                                  const ExecOptions& options);
  /// As above, with the data of value_sources() (one tensor each, in order).
  absl::StatusOr<Tensor> Evaluate(const DimBinding& binding, const SubgraphEvaluator& evaluator,
                                  const ExecOptions& options, std::vector<Tensor> values);

 private:
  std::vector<const Value*> sources_;
  std::vector<const Value*> value_sources_;
  std::vector<const Node*> nodes_;
  int64_t sliced_buffer_length_ = 0;
  std::shared_ptr<Graph> graph_;
  std::shared_ptr<PreparedSubgraph> prepared_;
};

}  // namespace attune
