// The model validator: every attribute and edge count is untrusted until it
// has been checked against the node's op, so it runs at import and again
// before each stage of passes, which then may rely on what it checked.
#pragma once

#include "absl/status/status.h"
#include "core/ir/graph.h"

namespace attune {

/// Checks every node of `graph`:
///  - the number of inputs and outputs against its op's schema (op_arity.h),
///    required inputs present, no input of a variadic list omitted;
///  - attributes that index dims (Transpose perm; the axis of Softmax,
///    LogSoftmax, Concat, Gather, GatherElements, ScatterElements, Scatter,
///    Split, ArgMax, ArgMin, Flatten, LayerNormalization, RMSNormalization; the axes of Squeeze,
///    Unsqueeze and the Reduce ops) against the input ranks known so far.
/// InvalidArgument naming the node, op and attribute (or count) otherwise.
/// Ops without an entry are left to the kernel registry.
absl::Status ValidateGraph(const Graph& graph);

}  // namespace attune
