// Small, type-preserving edits of a valid graph, driven by fuzz bytes: an
// integer or float attribute, one element of an integer list attribute, one
// element of a small constant (shape vectors, axes, scales, fill values), or
// one dim of a declared input shape. The edited graph is still well formed
// as a graph (the validator and the passes decide whether it is a valid model).
#pragma once

#include "core/ir/graph.h"
#include "fuzz/byte_reader.h"

namespace attune::fuzz {

/// Applies 1 to 4 edits chosen by `reader` to `graph`.
void MutateGraph(Graph& graph, ByteReader& reader);

}  // namespace attune::fuzz
