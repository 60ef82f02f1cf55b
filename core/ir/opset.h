// The opset a node is read at, which chooses its kernel (Plan, RunNode) and
// what a checker of the node may expect of it.
#pragma once

#include "core/ir/graph.h"

namespace attune {

/// The graph's import for the node's domain; 1 for a custom domain the model
/// does not import (as Plan does).
int KernelOpsetFor(const Graph& graph, const Node& node);

}  // namespace attune
