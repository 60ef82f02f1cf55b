// Runs one node's kernel once, outside any Plan: constant folding and shape
// analysis evaluate single nodes with it.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/graph.h"
#include "core/ir/opset.h"
#include "ops/kernel.h"
#include "ops/registry.h"

namespace attune {

struct RunNodeOptions {
  /// Show the inputs to the kernel factory as compile-time constants (as
  /// they are when folding); false makes the kernel treat them as run-time data.
  bool inputs_are_constant = true;
  ExecOptions exec;
};

/// Prepares `node`'s kernel from `registry` for opset `opset` and runs it on
/// `inputs` (one per node input; an empty Tensor for an omitted input).
/// Returns one tensor per node output (empty for an omitted output). Errors
/// from the kernel are returned, prefixed with the node.
absl::StatusOr<std::vector<Tensor>> RunNode(const Node& node, int opset, const std::vector<Tensor>& inputs,
                                            const KernelRegistry& registry, const RunNodeOptions& options = {});

}  // namespace attune
