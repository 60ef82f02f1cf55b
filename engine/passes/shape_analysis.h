// Symbolic shape analysis: runs the per-op shape rules over a graph in
// topological order and keeps, for every value, its type, symbolic shape and
// (for small integer tensors) symbolic contents. Shape inference writes the
// results into the graph; shape folding reads the contents to fold chains.
#pragma once

#include <optional>

#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "core/ir/graph.h"
#include "engine/passes/shape_rules/shape_context.h"

namespace attune {

class ShapeAnalysis {
 public:
  /// Analyses `graph`. Facts start from what the values carry (input shapes,
  /// value_info, constants) and inferred facts are merged in with MergeShapes.
  static absl::StatusOr<ShapeAnalysis> Run(const Graph& graph);

  /// The facts of `value` (type and shape as in the graph if never analysed).
  const ValueFacts& facts(const Value* value) const;

 private:
  absl::node_hash_map<const Value*, ValueFacts> facts_;
};

/// True for the placeholder symbols inference makes up ("unk__<value>_<dim>").
bool IsFreshSymbol(const Dim& dim);

/// Combines a value's current shape with an inferred one, dim by dim: a
/// number beats a symbol, a symbol beats unknown, an inferred named symbol
/// beats the current symbol (a declared one is an unchecked claim), a named
/// symbol beats a fresh one; otherwise the current dim stays. A rank conflict
/// keeps `current`.
std::optional<SymbolicShape> MergeShapes(const std::optional<SymbolicShape>& current,
                                         const std::optional<SymbolicShape>& inferred);

/// Equality of shapes as written (unknown dims equal each other).
bool SameShape(const std::optional<SymbolicShape>& a, const std::optional<SymbolicShape>& b);

}  // namespace attune
