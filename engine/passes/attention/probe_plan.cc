#include "engine/passes/attention/probe_plan.h"

#include "absl/strings/str_cat.h"
#include "engine/passes/symbolic_dim.h"
#include "engine/pattern/constants.h"

namespace attune::attention {
namespace {

constexpr int64_t kProbePast = 5;
// With a KV cache, the query lengths every past length is probed with.
constexpr int64_t kPastProbeQueries[] = {1, 3};

}  // namespace

std::string Probe::Label() const {
  return past == 0 ? absl::StrCat("T=", t) : absl::StrCat("T=", t, " past=", past);
}

absl::StatusOr<ProbePlan> PlanProbes(const ProbeDims& r, const std::vector<const Value*>& sources) {
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
  // A key length of the query length plus a symbol of its own (a cache
  // concatenated before the block, past+seq): that symbol is the past.
  const Dim beyond_query = DimSub(r.kv_len, r.q_len);
  if (kv_free && !r.past_len.has_value() && IsPlainSymbol(beyond_query) && !known.count(beyond_query.symbol())) {
    plan.past_symbol = beyond_query.symbol();
    plan.past_varies = true;
    known.insert(*plan.past_symbol);
    kv_free = false;
  }
  if (kv_free) {
    if (!IsPlainSymbol(r.kv_len))
      return NotCausal(absl::StrCat("cannot probe the mask: key length is ", r.kv_len.ToString()));
    plan.kv_symbol = r.kv_len.symbol();
    plan.past_varies = true;
  }
  // A minimum is not a symbol of its own: binding it apart from its
  // arguments (min(past, past+seq) to the other dims' size) would give the
  // sources sizes that contradict each other.
  for (const Value* source : sources) {
    if (!source->shape().has_value()) continue;
    for (const Dim& d : *source->shape())
      for (const std::string& s : NamedSymbolsOf(d))
        if (!known.count(s) && s != plan.kv_symbol.value_or("")) plan.other_symbols.insert(s);
  }
  return plan;
}

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

DimBinding BindingFor(const ProbePlan& plan, const Probe& p, const ProbeDims& r) {
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


absl::StatusOr<Structure> StructureOf(const std::vector<Evaluated>& probes) {
  bool all_open = true;
  for (const Evaluated& e : probes)
    for (bool b : e.blocked) all_open = all_open && !b;
  if (all_open) return Structure{true, 0};
  auto causal = FirstMismatch(probes, 0);
  if (!causal) return Structure{false, 0};
  // A key hidden that causal attention would show: perhaps a sliding window,
  // whose width that row tells.
  if (causal->actual_blocked) {
    const int64_t window = WindowOfRow(*causal->probe, causal->row);
    if (window > 0 && !FirstMismatch(probes, window)) return Structure{false, window};
  }
  return NotCausal(absl::StrCat("mask differs from causal at ", causal->probe->probe.Label(), " row ", causal->row,
                                " col ", causal->col, causal->actual_blocked ? " (hidden, causal shows it)"
                                                                             : " (shown, causal hides it)"));
}

}  // namespace attune::attention
