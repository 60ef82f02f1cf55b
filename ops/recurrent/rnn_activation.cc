#include "ops/recurrent/rnn_activation.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"

namespace attune {
namespace {

using Kind = RnnActivation::Kind;

struct KindInfo {
  const char* name;
  Kind kind;
  int uses;  // 0: neither, 1: alpha, 2: alpha and beta
  double alpha, beta;  // ONNX defaults
};

constexpr KindInfo kKinds[] = {
    {"relu", Kind::kRelu, 0, 0, 0},
    {"tanh", Kind::kTanh, 0, 0, 0},
    {"sigmoid", Kind::kSigmoid, 0, 0, 0},
    {"affine", Kind::kAffine, 2, 1.0, 0.0},
    {"leakyrelu", Kind::kLeakyRelu, 1, 0.01, 0},
    {"thresholdedrelu", Kind::kThresholdedRelu, 1, 1.0, 0},
    {"scaledtanh", Kind::kScaledTanh, 2, 1.0, 1.0},
    {"hardsigmoid", Kind::kHardSigmoid, 2, 0.2, 0.5},
    {"elu", Kind::kElu, 1, 1.0, 0},
    {"softsign", Kind::kSoftsign, 0, 0, 0},
    {"softplus", Kind::kSoftplus, 0, 0, 0},
};

}  // namespace

double RnnActivation::operator()(double x) const {
  switch (kind) {
    case Kind::kRelu: return std::max(x, 0.0);
    case Kind::kTanh: return std::tanh(x);
    case Kind::kSigmoid: return 1 / (1 + std::exp(-x));
    case Kind::kAffine: return alpha * x + beta;
    case Kind::kLeakyRelu: return x >= 0 ? x : alpha * x;
    case Kind::kThresholdedRelu: return x > alpha ? x : 0;
    case Kind::kScaledTanh: return alpha * std::tanh(beta * x);
    case Kind::kHardSigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
    case Kind::kElu: return x >= 0 ? x : alpha * (std::exp(x) - 1);
    case Kind::kSoftsign: return x / (1 + std::fabs(x));
    case Kind::kSoftplus: return x > 30 ? x : std::log1p(std::exp(x));
  }
  return x;
}

absl::StatusOr<std::vector<RnnActivation>> ReadRnnActivations(std::string_view label, const Attributes& attrs,
                                                             int per_direction, int directions,
                                                             const std::vector<std::string>& defaults) {
  std::vector<std::string> names;
  if (attrs.Has("activations")) {
    ASSIGN_OR_RETURN(names, attrs.GetStrings("activations"));
  }
  if (names.empty()) {
    for (int d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (static_cast<int>(names.size()) == per_direction && directions == 2) {
    names.insert(names.end(), names.begin(), names.end());
  } else if (static_cast<int>(names.size()) != per_direction * directions) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(label), ": attribute 'activations' lists ", names.size(),
                                                   " functions; expected ", per_direction * directions));
  }
  std::vector<float> alphas, betas;
  if (attrs.Has("activation_alpha")) {
    ASSIGN_OR_RETURN(alphas, attrs.GetFloats("activation_alpha"));
  }
  if (attrs.Has("activation_beta")) {
    ASSIGN_OR_RETURN(betas, attrs.GetFloats("activation_beta"));
  }
  size_t next_alpha = 0, next_beta = 0;
  std::vector<RnnActivation> out;
  for (const std::string& name : names) {
    const std::string lower = absl::AsciiStrToLower(name);
    const KindInfo* info = nullptr;
    for (const KindInfo& k : kKinds)
      if (lower == k.name) info = &k;
    if (info == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(Sv(label), ": attribute 'activations' names the unknown function ",
                                                     QuoteName(name)));
    RnnActivation a{info->kind, info->alpha, info->beta};
    if (info->uses >= 1 && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (info->uses >= 2 && next_beta < betas.size()) a.beta = betas[next_beta++];
    out.push_back(a);
  }
  return out;
}

}  // namespace attune
