#include "engine/passes/attention/mask_proof.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/attention/probe_lengths.h"
#include "engine/pattern/constants.h"
#include "engine/rewrite/dim_binding.h"
#include "engine/rewrite/shape_subgraph.h"

namespace attune::attention {
namespace {

constexpr int64_t kProbePast = 5;
// With a KV cache, the query lengths every past length is probed with.
constexpr int64_t kPastProbeQueries[] = {1, 3};
// Dims the proof does not vary (batch, ...) get this size.
constexpr int64_t kOtherDimSize = 2;
// An additive mask entry at or below this hides its key.
constexpr double kBlockingValue = -1e4;

absl::Status NotCausal(std::string reason) { return absl::FailedPreconditionError(std::move(reason)); }

struct Probe {
  int64_t t = 0;
  int64_t past = 0;  // keys before the first query's position: kv_len - t
  std::string Label() const {
    return past == 0 ? absl::StrCat("T=", t) : absl::StrCat("T=", t, " past=", past);
  }
};

// One evaluated probe: blocked[s][i][j] flattened, for every leading slice s.
struct Evaluated {
  Probe probe;
  int64_t slices = 1, rows = 0, cols = 0;
  std::vector<bool> blocked;
  bool at(int64_t s, int64_t i, int64_t j) const { return blocked[(s * rows + i) * cols + j]; }
};

// How the probe sizes map onto the model's symbols.
struct ProbePlan {
  std::optional<std::string> q_symbol;     // bound to T
  std::optional<int64_t> q_fixed;
  std::optional<std::string> past_symbol;  // bound to the past length
  std::optional<int64_t> past_fixed;
  std::optional<std::string> kv_symbol;    // a free key-length symbol, bound to T + past
  bool past_varies = false;
  std::set<std::string> other_symbols;
};

absl::StatusOr<ProbePlan> PlanProbes(const MaskProofRequest& r, const ShapeSubgraph& cut) {
  ProbePlan plan;
  if (r.q_len.is_known()) {
    plan.q_fixed = r.q_len.value();
  } else if (IsPlainSymbol(r.q_len)) {
    plan.q_symbol = r.q_len.symbol();
  } else {
    return NotCausal(absl::StrCat("cannot probe the mask: query length is ", r.q_len.ToString()));
  }
  if (r.past_len.has_value()) {
    if (r.past_len->is_known()) {
      plan.past_fixed = r.past_len->value();
    } else if (IsPlainSymbol(*r.past_len)) {
      plan.past_symbol = r.past_len->symbol();
      plan.past_varies = true;
    } else {
      return NotCausal(absl::StrCat("cannot probe the mask: past length is ", r.past_len->ToString()));
    }
  }
  // The key length either follows from the query and past symbols, or is a
  // free symbol of its own that the probe sets to T + past.
  std::set<std::string> known;
  if (plan.q_symbol) known.insert(*plan.q_symbol);
  if (plan.past_symbol) known.insert(*plan.past_symbol);
  std::set<std::string> kv_symbols = SymbolsOf(r.kv_len);
  bool kv_free = false;
  for (const std::string& s : kv_symbols) kv_free |= !known.count(s);
  if (r.kv_len.is_unknown()) return NotCausal("cannot probe the mask: key length unknown");
  if (kv_free) {
    if (!IsPlainSymbol(r.kv_len))
      return NotCausal(absl::StrCat("cannot probe the mask: key length is ", r.kv_len.ToString()));
    plan.kv_symbol = r.kv_len.symbol();
    plan.past_varies = true;
  }
  for (const Value* source : cut.sources()) {
    if (!source->shape().has_value()) continue;
    for (const Dim& d : *source->shape())
      for (const std::string& s : SymbolsOf(d))
        if (!known.count(s) && s != plan.kv_symbol.value_or("")) plan.other_symbols.insert(s);
  }
  return plan;
}

// Every probe length as the query length (with past 0 and kProbePast), and,
// with a KV cache, every probe length as the past for a short query: a window
// or an offset shows once queries or past keys reach beyond it.
std::vector<Probe> ProbeSizes(const ProbePlan& plan, const std::vector<int64_t>& lengths, int64_t buffer_length) {
  std::vector<int64_t> pasts = {plan.past_fixed.value_or(0)};
  if (plan.past_varies) pasts = {0, kProbePast};
  std::vector<int64_t> queries = lengths;
  if (plan.q_fixed) queries = {*plan.q_fixed};
  std::set<std::pair<int64_t, int64_t>> sizes;
  for (int64_t t : queries)
    for (int64_t past : pasts) sizes.insert({t, past});
  if (plan.past_varies) {
    std::vector<int64_t> short_queries(std::begin(kPastProbeQueries), std::end(kPastProbeQueries));
    if (plan.q_fixed) short_queries = {*plan.q_fixed};
    for (int64_t past : lengths)
      for (int64_t t : short_queries) sizes.insert({t, past});
  }
  if (buffer_length > 0 && !plan.q_fixed) {
    for (int64_t past : pasts)
      if (buffer_length - past >= 1) sizes.insert({buffer_length - past, past});
  }
  std::vector<Probe> probes;
  for (auto [t, past] : sizes) {
    // A buffer shorter than the probe cannot serve it: the model cannot run there either.
    if (buffer_length > 0 && t + past > buffer_length) continue;
    probes.push_back({t, past});
  }
  return probes;
}

DimBinding BindingFor(const ProbePlan& plan, const Probe& p, const MaskProofRequest& r) {
  DimBinding b;
  for (const std::string& s : plan.other_symbols) b.Bind(s, kOtherDimSize);
  if (plan.q_symbol) b.Bind(*plan.q_symbol, p.t);
  if (plan.past_symbol) b.Bind(*plan.past_symbol, p.past);
  if (plan.kv_symbol) b.Bind(*plan.kv_symbol, p.t + p.past);
  // Spellings of the key length such as "past+seq" are bound too, in case a
  // source carries them as opaque symbols.
  if (r.kv_len.is_symbol() && !b.IsBound(r.kv_len.symbol())) b.Bind(r.kv_len.symbol(), p.t + p.past);
  return b;
}

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

struct Mismatch {
  const Evaluated* probe;
  int64_t row, col;
  bool actual_blocked;
};

bool ExpectedBlocked(int64_t i, int64_t j, int64_t offset, int64_t window) {
  return j > i + offset || (window > 0 && j <= i + offset - window);
}

std::optional<Mismatch> FirstMismatch(const std::vector<Evaluated>& probes, int64_t window) {
  for (const Evaluated& e : probes) {
    const int64_t offset = e.cols - e.rows;
    for (int64_t s = 0; s < e.slices; ++s)
      for (int64_t i = 0; i < e.rows; ++i)
        for (int64_t j = 0; j < e.cols; ++j)
          if (e.at(s, i, j) != ExpectedBlocked(i, j, offset, window)) return Mismatch{&e, i, j, e.at(s, i, j)};
  }
  return std::nullopt;
}

// The window a row shows when its open keys are exactly [lo, i + offset]; 0 otherwise.
int64_t WindowOfRow(const Evaluated& e, int64_t row) {
  const int64_t last = row + e.cols - e.rows;
  int64_t lo = -1;
  for (int64_t j = 0; j < e.cols; ++j) {
    if (!e.at(0, row, j)) {
      lo = j;
      break;
    }
  }
  if (lo < 0 || lo > last) return 0;
  for (int64_t j = 0; j < e.cols; ++j)
    if (e.at(0, row, j) != (j < lo || j > last)) return 0;
  return last - lo + 1;
}

}  // namespace

absl::StatusOr<ProvenMask> ProveCausalMask(const Graph& graph, const MaskProofRequest& request,
                                           const SubgraphEvaluator& evaluator, const ExecOptions& options) {
  auto cut = ShapeSubgraph::Cut(graph, request.mask);
  if (!cut.ok()) return NotCausal(absl::StrCat("mask ", cut.status().message()));
  ASSIGN_OR_RETURN(ProbePlan plan, PlanProbes(request, *cut));
  ASSIGN_OR_RETURN(const ProbeLengths lengths, ProbeLengthsOf(*cut));
  const std::vector<Probe> probes = ProbeSizes(plan, lengths.lengths, cut->sliced_buffer_length());
  if (probes.empty()) return NotCausal("mask cannot be probed: no probe size fits its buffer");

  std::vector<Evaluated> evaluated;
  for (const Probe& p : probes) {
    const DimBinding binding = BindingFor(plan, p, request);
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
  bool all_open = true;
  for (const Evaluated& e : evaluated)
    for (bool b : e.blocked) all_open = all_open && !b;
  const int64_t longest = lengths.longest_constant;
  int64_t reach = 0;
  for (const Evaluated& e : evaluated) reach = std::max(reach, e.cols);
  if (all_open) return ProvenMask{true, 0, probes_run, longest, reach};
  auto causal = FirstMismatch(evaluated, 0);
  if (!causal) return ProvenMask{false, 0, probes_run, longest, reach};
  // A key hidden that causal attention would show: perhaps a sliding window,
  // whose width that row tells.
  if (causal->actual_blocked) {
    const int64_t window = WindowOfRow(*causal->probe, causal->row);
    if (window > 0 && !FirstMismatch(evaluated, window)) return ProvenMask{false, window, probes_run, longest, reach};
  }
  return NotCausal(absl::StrCat("mask differs from causal at ", causal->probe->probe.Label(), " row ", causal->row,
                                " col ", causal->col, causal->actual_blocked ? " (hidden, causal shows it)"
                                                                             : " (shown, causal hides it)"));
}

}  // namespace attune::attention
