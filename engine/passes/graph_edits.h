// Graph edits the canonicalisation passes share, built on Graph's edit API.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "attune/tensor.h"
#include "core/ir/graph.h"

namespace attune {

/// Replaces `node` by constants: output i keeps its Value (name, uses, graph
/// output status) and becomes a constant holding tensors[i]; the node is removed.
/// Omitted outputs (nullptr) ignore their tensor.
absl::Status ReplaceNodeWithConstants(Graph& graph, Node* node, std::vector<Tensor> tensors);

/// Makes `replacement` stand for `node`'s output 0: its readers read
/// `replacement` instead, or, when that output is a graph output, `node`
/// becomes Identity(replacement) so that the output keeps its name.
void ReplaceOutputWith(Graph& graph, Node* node, Value* replacement);

/// A 1-D int64 tensor.
Tensor Int64Vector(const std::vector<int64_t>& values);

/// Bytewise equality of two tensors (type, shape and contents).
bool SameTensor(const Tensor& a, const Tensor& b);

}  // namespace attune
