// Test graphs written node for node as torch.onnx (opset 17) exports the
// course's multi-head attention module (models/mha_shape_scale), so that pass
// tests see exactly what the exporter writes: Constant nodes, repeated
// Shape -> Gather -> Unsqueeze -> Concat chains per Reshape, the
// K.size(-1) ** 0.5 scale chain and the mask[:T, :T] slicing of a buffer.
#pragma once

#include "tests/common/graph_builder.h"

namespace attune::testing {

struct TorchMhaOptions {
  int64_t d_model = 64;
  int64_t num_heads = 4;
  int64_t context_length = 64;  // side of the causal mask buffer
  /// true: scores / K.size(-1) ** 0.5 computed in the graph; false: Div by a constant.
  bool scale_from_shape = true;
  bool causal = true;
};

/// Adds the module applied to `x` [batch, seq, d_model] and returns its output.
/// Weights are deterministic and small.
Value* AddTorchMultiHeadAttention(GraphBuilder& b, Value* x, const TorchMhaOptions& options = {});

/// A whole graph: input "x" [batch, seq, d_model] -> the module's output.
std::unique_ptr<Graph> TorchMultiHeadAttentionGraph(const TorchMhaOptions& options = {});

/// Deterministic pseudo-random float tensor in [-1, 1).
Tensor PseudoRandom(std::vector<int64_t> shape, uint32_t seed);

}  // namespace attune::testing
