// What the DOT view folds away by default: shape computations and repeated layers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/graph.h"

namespace attune::cli {

/// True when input `index` of `node` is read as a list of sizes, axes or
/// indices (Reshape's shape, Slice's ends, Expand's shape, ...), not as data.
bool IsShapeInput(const Node& node, int index);

/// Nodes that only compute shapes: cheap integer ops whose every output feeds
/// a shape input (IsShapeInput) or another such node, and no graph output.
absl::flat_hash_set<const Node*> ShapeOnlyNodes(const Graph& graph);

/// Layers `<prefix><i>/...` (e.g. "/blocks.1/...") structurally identical to
/// the first layer with that prefix; the first stays visible, the rest fold.
struct LayerGroup {
  std::string prefix;                  // "/blocks."
  int64_t shown_index = 0;             // the layer drawn in full
  std::vector<int64_t> folded_indices; // ascending
  int nodes_per_layer = 0;             // visible nodes of one layer
  std::map<std::string, int> ops_per_layer;
};

struct LayerFolding {
  std::vector<LayerGroup> groups;
  absl::flat_hash_map<const Node*, int> group_of;  // folded node -> index into groups
};

/// Finds foldable layers among `nodes`, ignoring the nodes in `hidden`.
LayerFolding FoldRepeatedLayers(const std::vector<Node*>& nodes, const absl::flat_hash_set<const Node*>& hidden);

}  // namespace attune::cli
