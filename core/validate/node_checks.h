// Internal to the validator: the per-op checks of attributes that index the
// dims of an input (perm, axis, axes), against the input ranks known so far.
#pragma once

#include "absl/status/status.h"
#include "core/ir/graph.h"

namespace attune::validate {

/// OK when every dim-indexing attribute of `node` fits the ranks of its inputs
/// (an unknown rank checks only what needs no rank); InvalidArgument naming
/// the node, op and attribute otherwise.
absl::Status CheckNodeAttributes(const Node& node, int opset);

}  // namespace attune::validate
