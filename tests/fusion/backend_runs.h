// Runs a compiled graph on every attention backend and ISA variant this CPU
// has, for the differential fusion tests.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "engine/exec/plan.h"
#include "ops/attention/attention_backend.h"
#include "ops/common/cpu_features.h"
#include "ops/registry.h"

namespace attune::testing {

struct Backend {
  std::string name;
  AttentionBackend backend;
  std::optional<Isa> isa;
};

/// reference, oneDNN, and simd / auto for every ISA the CPU has.
inline std::vector<Backend> Backends() {
  std::vector<Backend> out = {{"reference", AttentionBackend::kReference, std::nullopt},
                              {"onednn", AttentionBackend::kOneDnn, std::nullopt}};
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    out.push_back({std::string("simd_") + IsaName(isa), AttentionBackend::kSimd, isa});
    out.push_back({std::string("auto_") + IsaName(isa), AttentionBackend::kAuto, isa});
  }
  return out;
}

inline absl::StatusOr<std::vector<Tensor>> RunWith(const Graph& graph, const std::vector<Tensor>& inputs,
                                                   const Backend& b) {
  ExecOptions options;
  options.attention_backend = b.backend;
  options.threads = 2;
  SetForcedIsa(b.isa);
  auto plan = Plan::Compile(graph, DefaultKernelRegistry(), options);
  absl::StatusOr<std::vector<Tensor>> out =
      plan.ok() ? (*plan)->Run(inputs) : absl::StatusOr<std::vector<Tensor>>(plan.status());
  SetForcedIsa(std::nullopt);
  return out;
}

/// Max |a - b| where neither is NaN; infinity when only one of them is NaN.
inline double MaxErrorNanAware(const Tensor& a, const Tensor& b, int64_t* nans) {
  double worst = 0.0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    const float x = a.data<float>()[i], y = b.data<float>()[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (!(std::isnan(x) && std::isnan(y))) return INFINITY;
      ++*nans;
      continue;
    }
    worst = std::max(worst, std::fabs(static_cast<double>(x) - y));
  }
  return worst;
}

}  // namespace attune::testing
