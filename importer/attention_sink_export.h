// An attune.MultiHeadAttention with attention sinks (its sinks input) written
// back as the standard subgraph it stands for, since ONNX Attention has no
// sink (importer/attention_sink_export.cc).
#pragma once

#include <string>

#include "core/ir/graph.h"

namespace attune {

/// Replaces `node` in `graph` by default-domain ops (at `opset`, >= 13) that
/// compute it: "" when done, else why it stays attune.MultiHeadAttention
/// (the graph is then unchanged but for unused constants).
std::string WriteSinkAttentionAsSubgraph(Graph& graph, Node* node, int opset);

}  // namespace attune
