// What attune.FusedConv does after the convolution: add a residual Z of Y's
// shape, then an activation, each as the ONNX op it replaces computes it
// (Add, then Relu, Clip, LeakyRelu, HardSwish, Sigmoid or Tanh).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/ir/attribute.h"

namespace attune {

enum class ConvActivation { kNone, kRelu, kClip, kLeakyRelu, kHardSwish, kSigmoid, kTanh };

struct ConvEpilogue {
  ConvActivation activation = ConvActivation::kNone;
  float alpha = 0.0f;  // Clip's min, LeakyRelu's alpha
  float beta = 0.0f;   // Clip's max
  bool residual = false;

  /// Whether oneDNN applies the activation inside the convolution: only where
  /// its post-op gives what the ONNX op gives for every input, NaN and ±inf
  /// included. Its relu (slope 0) and clip take NaN to a bound (ONNX keeps
  /// NaN), so those, and every activation after a residual sum (oneDNN's sum
  /// post-op would need Z in the convolution's blocked layout), run in
  /// ApplyConvEpilogue instead.
  bool OnOneDnn() const;
};

/// The epilogue of a node's attributes: activation ("" or absent: none),
/// activation_alpha, activation_beta; `residual` when the node has a Z input.
/// A bad attribute is one line naming the node.
absl::StatusOr<ConvEpilogue> ReadConvEpilogue(const std::string& label, const Attributes& attrs, bool residual);

/// The ONNX op name of an activation ("Relu"), "" for none.
const char* ConvActivationName(ConvActivation activation);

/// y = activation(y + z) over n elements (z null: no residual), leaving out
/// the activation when oneDNN applied it (`onednn_ran` and e.OnOneDnn()); a
/// no-op when nothing is left to do. NaN stays NaN as in the ONNX ops.
/// Splits the elements over `threads`.
void ApplyConvEpilogue(const ConvEpilogue& e, bool onednn_ran, const float* z, float* y, int64_t n, int threads);

}  // namespace attune
