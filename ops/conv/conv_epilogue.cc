#include "ops/conv/conv_epilogue.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/common/parallel.h"

namespace attune {
namespace {

struct NamedActivation {
  const char* name;
  ConvActivation activation;
};

constexpr NamedActivation kActivations[] = {
    {"Relu", ConvActivation::kRelu},           {"Clip", ConvActivation::kClip},
    {"LeakyRelu", ConvActivation::kLeakyRelu}, {"HardSwish", ConvActivation::kHardSwish},
    {"Sigmoid", ConvActivation::kSigmoid},     {"Tanh", ConvActivation::kTanh},
};

// One element, as the ONNX op computes it (comparisons written so NaN falls through).
inline float Activate(const ConvEpilogue& e, float v) {
  switch (e.activation) {
    case ConvActivation::kNone: return v;
    case ConvActivation::kRelu: return v < 0.0f ? 0.0f : v;
    case ConvActivation::kClip: {
      const float low = v < e.alpha ? e.alpha : v;
      return low > e.beta ? e.beta : low;
    }
    case ConvActivation::kLeakyRelu: return v < 0.0f ? v * e.alpha : v;
    case ConvActivation::kHardSwish: {
      const float t = v / 6.0f + 0.5f;
      return v * (t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t));
    }
    case ConvActivation::kSigmoid: return 1.0f / (1.0f + std::exp(-v));
    case ConvActivation::kTanh: return std::tanh(v);
  }
  return v;
}

// The loops per activation, so each one vectorises without a switch inside.
template <ConvActivation kActivation>
void Range(const ConvEpilogue& e, const float* z, float* y, int64_t begin, int64_t end) {
  ConvEpilogue fixed = e;
  fixed.activation = kActivation;
  if (z != nullptr) {
    for (int64_t i = begin; i < end; ++i) y[i] = Activate(fixed, y[i] + z[i]);
  } else {
    for (int64_t i = begin; i < end; ++i) y[i] = Activate(fixed, y[i]);
  }
}

}  // namespace

bool ConvEpilogue::OnOneDnn() const {
  if (residual) return false;
  switch (activation) {
    case ConvActivation::kLeakyRelu: return alpha != 0.0f;  // slope 0 takes oneDNN's relu path (NaN -> 0)
    case ConvActivation::kHardSwish:
    case ConvActivation::kSigmoid:
    case ConvActivation::kTanh: return true;
    default: return false;
  }
}

const char* ConvActivationName(ConvActivation activation) {
  for (const NamedActivation& a : kActivations)
    if (a.activation == activation) return a.name;
  return "";
}

absl::StatusOr<ConvEpilogue> ReadConvEpilogue(const std::string& label, const Attributes& attrs, bool residual) {
  ConvEpilogue e;
  e.residual = residual;
  absl::StatusOr<std::string> name = attrs.GetString("activation", "");
  if (!name.ok()) return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'activation' must be a string"));
  if (name->empty()) return e;
  bool known = false;
  for (const NamedActivation& a : kActivations)
    if (*name == a.name) {
      e.activation = a.activation;
      known = true;
    }
  if (!known)
    return absl::InvalidArgumentError(absl::StrCat(label, ": activation \"", *name,
                                                   "\" is none of Relu, Clip, LeakyRelu, HardSwish, Sigmoid, Tanh"));
  absl::StatusOr<float> alpha = attrs.GetFloat("activation_alpha", 0.0f);
  absl::StatusOr<float> beta = attrs.GetFloat("activation_beta", 0.0f);
  if (!alpha.ok() || !beta.ok())
    return absl::InvalidArgumentError(absl::StrCat(label, ": activation_alpha and activation_beta must be floats"));
  e.alpha = *alpha;
  e.beta = *beta;
  if (e.activation == ConvActivation::kClip && (std::isnan(e.alpha) || std::isnan(e.beta)))
    return absl::InvalidArgumentError(absl::StrCat(label, ": Clip bounds must not be NaN"));
  return e;
}

void ApplyConvEpilogue(const ConvEpilogue& e, bool onednn_ran, const float* z, float* y, int64_t n, int threads) {
  const bool activate = e.activation != ConvActivation::kNone && !(onednn_ran && e.OnOneDnn());
  if (z == nullptr && !activate) return;
  const ConvActivation a = activate ? e.activation : ConvActivation::kNone;
  ParallelForRange(n, kCheapOpGrain, threads, [&](int64_t begin, int64_t end) {
    switch (a) {
      case ConvActivation::kNone: Range<ConvActivation::kNone>(e, z, y, begin, end); break;
      case ConvActivation::kRelu: Range<ConvActivation::kRelu>(e, z, y, begin, end); break;
      case ConvActivation::kClip: Range<ConvActivation::kClip>(e, z, y, begin, end); break;
      case ConvActivation::kLeakyRelu: Range<ConvActivation::kLeakyRelu>(e, z, y, begin, end); break;
      case ConvActivation::kHardSwish: Range<ConvActivation::kHardSwish>(e, z, y, begin, end); break;
      case ConvActivation::kSigmoid: Range<ConvActivation::kSigmoid>(e, z, y, begin, end); break;
      case ConvActivation::kTanh: Range<ConvActivation::kTanh>(e, z, y, begin, end); break;
    }
  });
}

}  // namespace attune
