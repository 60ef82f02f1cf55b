// An attune.MultiHeadAttention written back as the standard subgraph it
// stands for, where ONNX Attention cannot: a node with attention sinks (its
// sinks input; ONNX Attention has no sink), or one whose probabilities
// (output 3) are read and whose masks ONNX Attention does not express
// (importer/attention_sink_export.cc).
#pragma once

#include <string>

#include "core/ir/graph.h"

namespace attune {

/// Replaces `node` in `graph` by default-domain ops (at `opset`, >= 13) that
/// compute it: "" when done, else why it stays attune.MultiHeadAttention
/// (the graph is then unchanged but for unused constants).
std::string WriteAttentionAsSubgraph(Graph& graph, Node* node, int opset);

}  // namespace attune
