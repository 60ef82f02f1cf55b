// A rewrite written down before it is made: new values and nodes, referring
// to existing values by name, and which existing values they replace. The
// same plan can be applied to the graph or to a clone of it (verify mode).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/graph.h"

namespace attune {

/// A value the plan creates; nodes refer to it as "$" + key.
struct PlannedValue {
  std::string key;
  std::string name_hint;
  ElementType type = ElementType::kUndefined;
  std::optional<SymbolicShape> shape;
  std::optional<Tensor> constant;  // for constant inputs (e.g. Unsqueeze axes)
};

struct PlannedNode {
  std::string op_type;
  std::string domain;
  std::string name_hint;
  std::vector<std::string> inputs;   // existing value names, "$key", or "" for an omitted input
  std::vector<std::string> outputs;  // "$key"
  Attributes attributes;
};

struct RewritePlan {
  std::vector<PlannedValue> values;
  std::vector<PlannedNode> nodes;
  /// Existing value name -> "$key" that takes over all its uses. Uses by nodes
  /// the new nodes depend on keep the old value (so no cycle can form).
  std::vector<std::pair<std::string, std::string>> replace;

  /// Adds a value and returns its reference ("$key").
  std::string AddValue(const std::string& key, const std::string& name_hint, ElementType type,
                       std::optional<SymbolicShape> shape);
};

struct AppliedPlan {
  std::map<std::string, std::string> value_names;  // key -> actual value name
  std::vector<std::string> node_names;             // actual names of the new nodes, in plan order
  std::vector<std::string> removed;                // nodes that became dead and were removed
};

/// Makes the rewrite; InvalidArgument if a referenced value does not exist.
absl::StatusOr<AppliedPlan> ApplyRewritePlan(Graph& graph, const RewritePlan& plan);

}  // namespace attune
