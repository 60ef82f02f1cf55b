#include "engine/passes/attention/mask_proof.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/attention/probe_lengths.h"
#include "engine/passes/attention/probe_plan.h"
#include "engine/pattern/constants.h"
#include "engine/rewrite/dim_binding.h"
#include "engine/rewrite/shape_subgraph.h"

namespace attune::attention {
namespace {

absl::StatusOr<Evaluated> ReadMask(const Tensor& m, const Probe& p, int64_t kv, MaskReading reading) {
  Evaluated e;
  e.probe = p;
  if (m.rank() < 2) return NotCausal(absl::StrCat("mask has rank ", m.rank(), " at ", p.Label()));
  e.rows = m.shape()[m.rank() - 2];
  e.cols = m.shape()[m.rank() - 1];
  e.slices = e.rows * e.cols == 0 ? 0 : m.num_elements() / (e.rows * e.cols);
  if (e.rows != p.t || e.cols != kv) {
    return NotCausal(absl::StrCat("mask has shape ", ShapeToString(m.shape()), " at ", p.Label(),
                                  ", not one row per query and one column per key (", p.t, " x ", kv, ")"));
  }
  auto values = pattern::TensorAsDoubles(m);
  if (!values) return NotCausal(absl::StrCat("mask has element type ", ElementTypeName(m.type())));
  e.blocked.resize(values->size());
  for (size_t k = 0; k < values->size(); ++k) {
    const double v = (*values)[k];
    switch (reading) {
      case MaskReading::kBlockedWhereTrue: e.blocked[k] = v != 0; break;
      case MaskReading::kBlockedWhereFalse: e.blocked[k] = v == 0; break;
      case MaskReading::kAdditive:
        if (v == 0) {
          e.blocked[k] = false;
        } else if (v <= kBlockingValue) {
          e.blocked[k] = true;
        } else {
          const int64_t col = static_cast<int64_t>(k) % e.cols;
          const int64_t row = (static_cast<int64_t>(k) / e.cols) % e.rows;
          return NotCausal(absl::StrCat("mask value ", v, " at ", p.Label(), " row ", row, " col ", col,
                                        " is neither 0 nor a blocking value (<= -1e4)"));
        }
        break;
    }
  }
  return e;
}

}  // namespace

absl::StatusOr<ProvenMask> ProveCausalMask(const Graph& graph, const MaskProofRequest& request,
                                           const SubgraphEvaluator& evaluator, const ExecOptions& options) {
  auto cut = ShapeSubgraph::Cut(graph, request.mask);
  if (!cut.ok()) return NotCausal(absl::StrCat("mask ", cut.status().message()));
  const ProbeDims dims{request.q_len, request.kv_len, request.past_len};
  ASSIGN_OR_RETURN(ProbePlan plan, PlanProbes(dims, cut->sources()));
  ASSIGN_OR_RETURN(const ProbeLengths lengths, ProbeLengthsOf(*cut));
  const std::vector<Probe> probes = ProbeSizes(plan, lengths.lengths, cut->sliced_buffer_length());
  if (probes.empty()) return NotCausal("mask cannot be probed: no probe size fits its buffer");

  std::vector<Evaluated> evaluated;
  for (const Probe& p : probes) {
    const DimBinding binding = BindingFor(plan, p, dims);
    auto kv = binding.Evaluate(request.kv_len);
    if (!kv) return NotCausal(absl::StrCat("cannot size the key length ", request.kv_len.ToString(), " at ", p.Label()));
    if (*kv < p.t) continue;  // fewer keys than queries: no bottom-right causal mask exists there
    auto mask = cut->Evaluate(binding, evaluator, options);
    if (!mask.ok()) return NotCausal(absl::StrCat("mask evaluation failed at ", p.Label(), ": ", mask.status().message()));
    Probe actual = p;
    actual.past = *kv - p.t;
    ASSIGN_OR_RETURN(Evaluated e, ReadMask(*mask, actual, *kv, request.reading));
    evaluated.push_back(std::move(e));
  }
  if (evaluated.empty()) return NotCausal("mask cannot be probed: no probe size has as many keys as queries");

  const int probes_run = static_cast<int>(evaluated.size());
  int64_t reach = 0;
  for (const Evaluated& e : evaluated) reach = std::max(reach, e.cols);
  ASSIGN_OR_RETURN(const Structure structure, StructureOf(evaluated));
  return ProvenMask{structure.open, structure.window, probes_run, lengths.longest_constant, reach};
}

}  // namespace attune::attention
