// The activation functions of RNN, GRU and LSTM, named by their `activations`
// attribute (ONNX's list: Relu, Tanh, Sigmoid, Affine, LeakyRelu,
// ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus), with the
// alpha / beta values of `activation_alpha` / `activation_beta`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/attribute.h"

namespace attune {

struct RnnActivation {
  enum class Kind { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu,
                    kSoftsign, kSoftplus };
  Kind kind = Kind::kTanh;
  double alpha = 0;
  double beta = 0;

  double operator()(double x) const;
};

/// The activations of a layer with `per_direction` functions per direction
/// (RNN 1, GRU 2, LSTM 3) and `directions` directions: the attribute's list
/// (per_direction or per_direction * directions names), or `defaults` for
/// every direction. alpha and beta are consumed in list order by the
/// functions that take them; a function left without a value gets its ONNX
/// op's default.
absl::StatusOr<std::vector<RnnActivation>> ReadRnnActivations(std::string_view label, const Attributes& attrs,
                                                             int per_direction, int directions,
                                                             const std::vector<std::string>& defaults);

}  // namespace attune
