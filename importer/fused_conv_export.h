// attune.FusedConv written back as the standard ops it computes, for a model
// that other ONNX runtimes run (--save-optimized).
#pragma once

#include "absl/status/status.h"
#include "core/ir/graph.h"

namespace attune {

/// Rewrites every attune.FusedConv of `graph` (an export copy) as Conv(X, W,
/// B), then Add of the residual Z, then its activation (Relu, Clip,
/// LeakyRelu, HardSwish, Sigmoid or Tanh), with a Transpose to channels first
/// before the Conv when X is channels last and one to channels last after it
/// when Y is. The last op takes the node's place.
absl::Status LowerFusedConvForOnnx(Graph& graph);

}  // namespace attune
