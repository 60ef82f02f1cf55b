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

// The mask of a model that slices it from a buffer of L positions (a causal
// or rotary table) is computed for at most L keys. When the subgraph, with no
// KV cache, gives the proven structure at L queries and keys and fails at
// L + 1 (or gives a mask the scores do not broadcast with), L bounds the
// fused op as it bounds the model; otherwise 0 (no bound).
int64_t BufferBound(ShapeSubgraph& cut, const ProbePlan& plan, const ProbeDims& dims, MaskReading reading,
                    const Structure& structure, const SubgraphEvaluator& evaluator, const ExecOptions& options) {
  const int64_t length = cut.sliced_buffer_length();
  if (length <= 0 || dims.past_len.has_value()) return 0;
  auto evaluate = [&](int64_t t) -> absl::StatusOr<Tensor> {
    const DimBinding binding = BindingFor(plan, Probe{t, 0}, dims);
    auto kv = binding.Evaluate(dims.kv_len);
    if (!kv || *kv != t) return absl::FailedPreconditionError("not a square probe");
    return cut.Evaluate(binding, evaluator, options);
  };
  // Beyond the buffer the subgraph fails, or gives a mask of another size
  // that the scores it is applied to do not broadcast with.
  auto beyond = evaluate(length + 1);
  if (beyond.ok()) {
    const auto& shape = beyond->shape();
    if (shape.size() < 2) return 0;
    const int64_t rows = shape[shape.size() - 2], cols = shape[shape.size() - 1];
    if ((rows == length + 1 || rows == 1) && (cols == length + 1 || cols == 1)) return 0;
  }
  auto at_bound = evaluate(length);
  if (!at_bound.ok()) return 0;
  auto read = ReadMask(*at_bound, Probe{length, 0}, length, reading);
  if (!read.ok()) return 0;
  std::vector<Evaluated> one{*std::move(read)};
  auto same = StructureOf(one);
  if (!same.ok() || same->open != structure.open || same->window != structure.window) return 0;
  return length;
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
  ProvenMask proven{structure.open, structure.window, probes_run, lengths.longest_constant, reach};
  proven.max_kv_len = BufferBound(*cut, plan, dims, request.reading, structure, evaluator, options);
  return proven;
}

}  // namespace attune::attention
