// Export of a lowered com.microsoft.GroupQueryAttention as the op it came
// from. The lowering (engine/passes/contrib/gqa_lowering.cc) writes
// attune.GroupQueryPositions, which checks seqlens_k against the cache and
// gives the rotary positions, the rotary embeddings and an
// attune.MultiHeadAttention; ONNX has no op for the first, and the file's
// own contract (seqlens_k, a shared max-length cache buffer) is
// GroupQueryAttention's. So the group is written back as one
// GroupQueryAttention node, which ONNX Runtime runs with that contract.
#pragma once

#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace attune {

/// Whether `mha` is the attune.MultiHeadAttention of a lowered
/// GroupQueryAttention that can be written back exactly.
bool IsLoweredGroupQueryAttention(const Node& mha);

/// Replaces each named attune.MultiHeadAttention of `graph` (each one
/// IsLoweredGroupQueryAttention) by the com.microsoft.GroupQueryAttention it
/// came from (same name and outputs), then drops the nodes only it read.
void WriteGroupQueryAttentionBack(Graph& graph, const std::vector<std::string>& names);

}  // namespace attune
