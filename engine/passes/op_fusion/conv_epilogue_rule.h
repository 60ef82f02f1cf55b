// The epilogue of a convolution folded into it: attune.FusedConv
// (ops/conv/conv_epilogue.h) computes Conv, plus a residual Z of the output's
// shape, then an activation, as the ONNX ops it replaces compute them.
#pragma once

#include "engine/passes/op_fusion/op_rule.h"

namespace attune::op_fusion {

/// "conv_residual": Add(Conv(...), Z) with Z of the Conv output's shape, anchored at the Add.
OpRule ConvResidualRule();
/// "conv_activation": Relu, Clip, LeakyRelu, HardSwish, Sigmoid or Tanh of a
/// Conv (or of a FusedConv with a residual), anchored at the activation.
OpRule ConvActivationRule();

}  // namespace attune::op_fusion
