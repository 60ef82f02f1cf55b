#include "engine/passes/attention/mask_chain_proof.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/status_macros.h"
#include "engine/passes/attention/half_mask_sweep.h"
#include "engine/passes/attention/probe_lengths.h"
#include "engine/pattern/constants.h"
#include "engine/rewrite/shape_subgraph.h"

namespace attune::attention {
namespace {

// Padding patterns run at the probe sizes with at most this many entries per
// (query, key) matrix, and always at the first few sizes; the structure is
// proven at every size with the all-ones pattern.
constexpr int64_t kMaxPaddingProbeEntries = int64_t{1} << 18;
constexpr size_t kAlwaysPaddedSizes = 3;
// 16-bit chains are read at every score of their type at this many sizes of
// at most this many (query, key) entries (the scores then hold 63490 float16
// or 65282 bfloat16 values each).
constexpr int kHalfSweepSizes = 2;
constexpr int64_t kHalfSweepEntries = 16;

enum class Entry : uint8_t { kVisible, kHiddenConstant, kHiddenOffset };

// One evaluation of the chain at one size and padding pattern.
struct Reading {
  int64_t slices = 0, rows = 0, cols = 0;
  std::vector<int64_t> slice_batch;  // the batch each slice belongs to; -1: every batch (broadcast)
  std::vector<Entry> entries;        // [slice][row][col]
  std::vector<float> constants;      // the value of kHiddenConstant entries, the offset of kHiddenOffset ones
  Entry at(int64_t s, int64_t i, int64_t j) const { return entries[(s * rows + i) * cols + j]; }
  float constant(int64_t s, int64_t i, int64_t j) const { return constants[(s * rows + i) * cols + j]; }
};

struct PaddingPattern {
  std::string name;
  std::vector<double> values;  // [batch][kv]
  bool other_values = false;   // holds values other than 0 and 1
};

std::vector<PaddingPattern> PatternsFor(int64_t batch, int64_t kv, bool allow_other_values) {
  auto filled = [&](double v) { return std::vector<double>(static_cast<size_t>(batch * kv), v); };
  const int64_t half = std::max<int64_t>(1, kv / 2);
  std::vector<PaddingPattern> out;
  out.push_back({"all ones", filled(1.0)});
  PaddingPattern left{"left padding", filled(1.0)};
  for (int64_t j = 0; j < half; ++j) left.values[j] = 0.0;  // batch 0
  out.push_back(std::move(left));
  PaddingPattern right{"right padding", filled(1.0)};
  for (int64_t j = kv - half; j < kv; ++j) right.values[(batch - 1) * kv + j] = 0.0;  // the last batch
  out.push_back(std::move(right));
  PaddingPattern holes{"holes", filled(1.0)};
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t at = b % 2 == 0 ? kv / 3 : kv - 1 - kv / 3;
    holes.values[b * kv + at] = 0.0;
    if (kv > 2) holes.values[b * kv] = b % 2 == 0 ? 0.0 : 1.0;
  }
  out.push_back(std::move(holes));
  PaddingPattern empty{"a fully padded batch", filled(1.0)};
  for (int64_t j = 0; j < kv; ++j) empty.values[j] = 0.0;
  if (batch > 1)
    for (int64_t j = 0; j + 1 < kv; ++j) empty.values[kv + j] = 0.0;  // batch 1 shows only its last key
  out.push_back(std::move(empty));
  if (allow_other_values) {
    PaddingPattern other{"values other than 0 and 1", filled(1.0), true};
    for (int64_t k = 0; k < batch * kv; ++k) other.values[k] = k % 3 == 0 ? 2.0 : k % 3 == 1 ? -1.0 : 0.0;
    out.push_back(std::move(other));
  }
  return out;
}

absl::StatusOr<Tensor> MaskTensor(ElementType type, int64_t batch, int64_t kv, const std::vector<double>& v,
                                  const ExecOptions& options) {
  ASSIGN_OR_RETURN(Tensor t, Tensor::Create(type, {batch, kv}, options.max_tensor_bytes));
  const size_t n = v.size();
  switch (type) {
    case ElementType::kBool:
      for (size_t k = 0; k < n; ++k) t.data<bool>()[k] = v[k] != 0.0;
      break;
    case ElementType::kInt64:
      for (size_t k = 0; k < n; ++k) t.data<int64_t>()[k] = static_cast<int64_t>(v[k]);
      break;
    case ElementType::kInt32:
      for (size_t k = 0; k < n; ++k) t.data<int32_t>()[k] = static_cast<int32_t>(v[k]);
      break;
    case ElementType::kFloat32:
      for (size_t k = 0; k < n; ++k) t.data<float>()[k] = static_cast<float>(v[k]);
      break;
    case ElementType::kFloat16:
      for (size_t k = 0; k < n; ++k) t.data<Float16>()[k] = FloatToHalf(static_cast<float>(v[k]));
      break;
    case ElementType::kBFloat16:
      for (size_t k = 0; k < n; ++k) t.data<BFloat16>()[k] = FloatToBFloat16(static_cast<float>(v[k]));
      break;
    case ElementType::kFloat64:
      for (size_t k = 0; k < n; ++k) t.data<double>()[k] = v[k];
      break;
    default:
      return NotCausal(absl::StrCat("the padding input is ", ElementTypeName(type)));
  }
  return t;
}

// The scores as the probe sets them: one value everywhere, every leading dim 1
// (the chain broadcasts them against its masks).
absl::StatusOr<Tensor> ScoresTensor(ElementType type, int rank, int64_t t, int64_t kv, float value,
                                    const ExecOptions& options) {
  std::vector<int64_t> shape(static_cast<size_t>(std::max(rank, 2)), 1);
  shape[shape.size() - 2] = t;
  shape[shape.size() - 1] = kv;
  ASSIGN_OR_RETURN(Tensor s, Tensor::Create(type, shape, options.max_tensor_bytes));
  if (type == ElementType::kFloat16) {
    std::fill(s.data<Float16>(), s.data<Float16>() + s.num_elements(), FloatToHalf(value));
  } else if (type == ElementType::kBFloat16) {
    std::fill(s.data<BFloat16>(), s.data<BFloat16>() + s.num_elements(), FloatToBFloat16(value));
  } else {
    std::fill(s.data<float>(), s.data<float>() + s.num_elements(), value);
  }
  return s;
}

// Reads each entry of the chain evaluated at scores 0 (`at0`) and c (`atc`):
// s itself (visible), a constant the scores do not reach (a fill), s plus a
// large negative offset (an additive mask); anything else is refused.
// Without a padding input (`per_batch` false) no batch is probed: every
// leading slice must then hold the structure, whatever the batch it is.
absl::StatusOr<Reading> Classify(const Tensor& at0, const Tensor& atc, double c, double eps, const Probe& p,
                                 int64_t kv, int64_t batch, bool per_batch) {
  Reading r;
  const Tensor& m = at0;
  if (m.rank() < 2 || m.shape() != atc.shape())
    return NotCausal(absl::StrCat("masked scores have shape ", ShapeToString(m.shape()), " at ", p.Label()));
  r.rows = m.shape()[m.rank() - 2];
  r.cols = m.shape()[m.rank() - 1];
  if (r.rows != p.t || r.cols != kv)
    return NotCausal(absl::StrCat("masked scores have shape ", ShapeToString(m.shape()), " at ", p.Label(),
                                  ", not one row per query and one column per key (", p.t, " x ", kv, ")"));
  r.slices = r.rows * r.cols == 0 ? 0 : m.num_elements() / (r.rows * r.cols);
  const int64_t lead = m.rank() >= 3 ? m.shape()[0] : 1;
  if (per_batch && lead != 1 && lead != batch)
    return NotCausal(absl::StrCat("masked scores have shape ", ShapeToString(m.shape()), " at ", p.Label(),
                                  ": the first dim is neither 1 nor the batch (", batch, ")"));
  r.slice_batch.resize(static_cast<size_t>(r.slices));
  for (int64_t s = 0; s < r.slices; ++s) r.slice_batch[s] = lead == 1 || !per_batch ? -1 : s / (r.slices / lead);
  auto v0 = pattern::TensorAsDoubles(at0);
  auto vc = pattern::TensorAsDoubles(atc);
  if (!v0 || !vc) return NotCausal(absl::StrCat("masked scores have element type ", ElementTypeName(m.type())));
  r.entries.resize(v0->size());
  r.constants.resize(v0->size());
  for (size_t k = 0; k < v0->size(); ++k) {
    const double a = (*v0)[k], b = (*vc)[k];
    const int64_t col = static_cast<int64_t>(k) % r.cols, row = (static_cast<int64_t>(k) / r.cols) % r.rows;
    auto where = [&] { return absl::StrCat(" at ", p.Label(), " row ", row, " col ", col); };
    if (std::isnan(a) || std::isnan(b)) return NotCausal(absl::StrCat("masked score is NaN", where()));
    if (a == b) {  // a constant: the scores do not reach it
      if (!(a <= kBlockingValue))
        return NotCausal(absl::StrCat("masked score is the constant ", a, where(), ", which does not hide its key"));
      r.entries[k] = Entry::kHiddenConstant;
      r.constants[k] = static_cast<float>(a);
      continue;
    }
    const double tolerance = std::max(std::fabs(a), c) * eps;
    if (std::fabs(b - a - c) > tolerance)
      return NotCausal(absl::StrCat("masked score", where(), " is ", a, " for scores 0 and ", b, " for scores ", c,
                                    ": neither the scores plus an offset nor a constant"));
    if (a == 0.0) {
      r.entries[k] = Entry::kVisible;
    } else if (a <= kBlockingValue) {
      r.entries[k] = Entry::kHiddenOffset;
      r.constants[k] = static_cast<float>(a);
    } else {
      return NotCausal(absl::StrCat("masked score", where(), " is the scores plus ", a, " (a bias, not a mask)"));
    }
  }
  return r;
}

// The batches slice `s` stands for.
std::vector<int64_t> BatchesOf(const Reading& r, int64_t s, int64_t batch) {
  if (r.slice_batch[s] >= 0) return {r.slice_batch[s]};
  std::vector<int64_t> all(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) all[b] = b;
  return all;
}

struct Structural {
  bool open = false;
  int64_t window = 0;
  bool Hides(int64_t i, int64_t j, int64_t offset) const { return !open && ExpectedBlocked(i, j, offset, window); }
};

// Calls visit(s, b, i, j, structural, padded) for every entry of `r`, once
// per batch its slice stands for, with whether the structure and the padding
// `pad` ([batch][kv], nullptr: none) hide it; stops at the first reason.
template <typename Visit>
std::optional<std::string> ForEachEntry(const Reading& r, const Structural& st, const std::vector<double>* pad,
                                        int64_t batch, Visit visit) {
  const int64_t offset = r.cols - r.rows;
  for (int64_t s = 0; s < r.slices; ++s)
    for (int64_t b : BatchesOf(r, s, batch))
      for (int64_t i = 0; i < r.rows; ++i)
        for (int64_t j = 0; j < r.cols; ++j) {
          const bool padded = pad != nullptr && (*pad)[b * r.cols + j] == 0.0;
          if (std::optional<std::string> why = visit(s, b, i, j, st.Hides(i, j, offset), padded)) return why;
        }
  return std::nullopt;
}

// The first entry of `r` that differs from the structure combined with the
// padding `pad`, as a reason.
std::optional<std::string> FirstDifference(const Reading& r, const Structural& st, const std::vector<double>* pad,
                                           int64_t batch, const Probe& p, const std::string& pattern) {
  return ForEachEntry(r, st, pad, batch,
                      [&](int64_t s, int64_t b, int64_t i, int64_t j, bool structural,
                          bool padded) -> std::optional<std::string> {
                        const bool actual = r.at(s, i, j) != Entry::kVisible;
                        if ((structural || padded) == actual) return std::nullopt;
                        return absl::StrCat("masked scores differ from ",
                                            st.open ? "" : st.window > 0 ? "window+" : "causal+", "padding at ",
                                            p.Label(), " with ", pattern, ", batch ", b, " row ", i, " col ", j,
                                            actual ? " (hidden, should show)" : " (shown, should hide)");
                      });
}

// Records the fills of every row with no visible key: per part, a constant
// or an offset added to the scores; a reason when one part's fill is not one
// number, or a constant in some rows and an offset in others.
std::optional<std::string> CollectFills(const Reading& r, const Structural& st, const std::vector<double>* pad,
                                        int64_t batch, const Probe& p, ProvenMaskChain& proven,
                                        std::array<bool, 3>& seen) {
  static const char* kParts[] = {"the causal part", "the padding", "both parts"};
  const int64_t offset = r.cols - r.rows;
  for (int64_t s = 0; s < r.slices; ++s)
    for (int64_t b : BatchesOf(r, s, batch))
      for (int64_t i = 0; i < r.rows; ++i) {
        bool any_visible = false;
        for (int64_t j = 0; j < r.cols && !any_visible; ++j) any_visible = r.at(s, i, j) == Entry::kVisible;
        if (any_visible) continue;
        proven.hidden_rows = true;
        for (int64_t j = 0; j < r.cols; ++j) {
          const bool adds = r.at(s, i, j) == Entry::kHiddenOffset;
          const bool padded = pad != nullptr && (*pad)[b * r.cols + j] == 0.0;
          const bool structural = st.Hides(i, j, offset);
          const int part = structural && padded ? 2 : structural ? 0 : 1;
          const float fill = r.constant(s, i, j);
          if (!seen[part]) {
            seen[part] = true;
            proven.fills[part] = fill;
            proven.fill_adds_score[part] = adds;
          } else if (proven.fill_adds_score[part] != adds) {
            return absl::StrCat("keys hidden by ", kParts[part], " get the scores plus an offset in some rows with no "
                                "visible key and a constant in others (", p.Label(), " batch ", b, " row ", i, ")");
          } else if (!(proven.fills[part] == fill)) {
            return absl::StrCat("keys hidden by ", kParts[part], " get different ", adds ? "offsets" : "scores",
                                " in rows with no visible key (", proven.fills[part], " and ", fill, " at ",
                                p.Label(), ")");
          }
        }
      }
  return std::nullopt;
}

// With a position bias: records the score every hidden entry of `r` gets,
// by the part that hides it, in proven.part_fills; a reason when one part
// gives two values (the fused op gives each part one fill).
std::optional<std::string> CollectPartFills(const Reading& r, const Structural& st, const std::vector<double>* pad,
                                            int64_t batch, const Probe& p, ProvenMaskChain& proven) {
  return ForEachEntry(r, st, pad, batch,
                      [&](int64_t s, int64_t b, int64_t i, int64_t j, bool structural,
                          bool padded) -> std::optional<std::string> {
                        if (!structural && !padded) return std::nullopt;
                        if (r.at(s, i, j) != Entry::kHiddenConstant)
                          return absl::StrCat("a hidden key's score depends on the scores at ", p.Label());
                        const int part = structural && padded ? 2 : structural ? 0 : 1;
                        const float fill = r.constant(s, i, j);
                        if (!proven.part_fill_seen[part]) {
                          proven.part_fill_seen[part] = true;
                          proven.part_fills[part] = fill;
                        } else if (!(proven.part_fills[part] == fill)) {
                          static const char* kParts[] = {"the causal part", "the padding", "both parts"};
                          return absl::StrCat("keys hidden by ", kParts[part], " get different scores (",
                                              proven.part_fills[part], " and ", fill, " at ", p.Label(), " batch ",
                                              b, " row ", i, " col ", j, ")");
                        }
                        return std::nullopt;
                      });
}

// Reads the chain evaluated at NaN scores (`at_nan`, laid out as `r`): a
// hidden entry that is NaN keeps the score (the part hiding it adds to it),
// one that is a number replaced it. Records that per part [causal only,
// padding only, both] in `kept`; a reason when one part does both.
std::optional<std::string> ReadNonFinite(const Tensor& at_nan, const Reading& r, const Structural& st,
                                         const std::vector<double>* pad, int64_t batch, const Probe& p,
                                         std::array<std::optional<bool>, 3>& kept) {
  auto v = pattern::TensorAsDoubles(at_nan);
  if (!v || v->size() != r.entries.size()) return std::string("masked scores at NaN scores cannot be read");
  return ForEachEntry(r, st, pad, batch,
                      [&](int64_t s, int64_t b, int64_t i, int64_t j, bool structural,
                          bool padded) -> std::optional<std::string> {
                        if (!padded && !structural) return std::nullopt;
                        const int part = structural && padded ? 2 : structural ? 0 : 1;
                        const bool nan = std::isnan((*v)[(s * r.rows + i) * r.cols + j]);
                        if (!kept[part]) {
                          kept[part] = nan;
                        } else if (*kept[part] != nan) {
                          static const char* kParts[] = {"the causal part", "the padding", "both parts"};
                          return absl::StrCat("a NaN score stays NaN at some keys ", kParts[part],
                                              " hides and not at others (", p.Label(), " batch ", b, " row ", i,
                                              " col ", j, ")");
                        }
                        return std::nullopt;
                      });
}

absl::StatusOr<ProvenMaskChain> Prove(const MaskChainRequest& request, ShapeSubgraph* cut,
                                      const SubgraphEvaluator& evaluator, const ExecOptions& options);
absl::StatusOr<ProvenMaskChain> ProveWithPolarity(const MaskChainRequest& request, ShapeSubgraph* cut,
                                                  const SubgraphEvaluator& evaluator, const ExecOptions& options,
                                                  bool true_pads);

int64_t RankOfBias(const Value* bias) {
  return bias->shape().has_value() ? static_cast<int64_t>(bias->shape()->size()) : 0;
}

// A fill no score plus a position bias below 2^100 reaches or moves: -inf,
// or a float at or below -2^127 (finfo.min is -(2 - 2^-23) * 2^127), whose
// spacing 2^104 absorbs any such addend.
constexpr double kBiasAbsorbingFill = -0x1p127;

}  // namespace

const absl::StatusOr<ProvenMaskChain>* MaskChainMemo::Find(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

void MaskChainMemo::Add(const std::string& key, absl::StatusOr<ProvenMaskChain> result) {
  entries_.emplace(key, std::move(result));
}

absl::StatusOr<ProvenMaskChain> ProveMaskChain(const Graph& graph, const MaskChainRequest& request,
                                               const SubgraphEvaluator& evaluator, const ExecOptions& options,
                                               MaskChainMemo* memo) {
  std::vector<const Value*> cut_values = {request.scores};
  if (request.bias != nullptr) cut_values.push_back(request.bias);
  auto cut = ShapeSubgraph::Cut(graph, request.masked, CutValues{cut_values, true});
  if (!cut.ok()) return NotCausal(absl::StrCat("mask ", cut.status().message()));
  if (request.bias != nullptr) {
    // One read: the Add the caller found. Any other would let the bias do more than add.
    int reads = 0;
    for (const Node* n : cut->nodes())
      for (const Value* in : n->inputs()) reads += in == request.bias;
    if (reads != 1)
      return NotCausal(absl::StrCat("the bias '", request.bias->name(), "' is read ", reads,
                                    " times by the mask steps, not once by the Add that adds it"));
  }
  if (memo == nullptr) return Prove(request, &*cut, evaluator, options);
  std::vector<std::string> symbols;
  std::string key = cut->Fingerprint(symbols);
  // The proof plans its probes by whether each length is known, one plain
  // symbol, or an expression: that is part of the key next to the renamed text.
  auto length = [&](const Dim& d) {
    return absl::StrCat(d.is_known() ? "k" : IsPlainSymbol(d) ? "p" : "e", RenamedDim(d, symbols));
  };
  absl::StrAppend(&key, "|q", length(request.dims.q_len), "|kv", length(request.dims.kv_len),
                  "|past", request.dims.past_len ? length(*request.dims.past_len) : "-", "|rank",
                  request.rank, "|", ElementTypeName(request.scores->type()), "|bias",
                  request.bias != nullptr ? RankOfBias(request.bias) : -1);
  if (const absl::StatusOr<ProvenMaskChain>* known = memo->Find(key)) {
    if (!known->ok()) return known->status();
    ProvenMaskChain again = **known;
    // The same input plays the padding's part in this cut.
    if (again.key_padding != nullptr) again.key_padding = cut->value_sources().back();
    return again;
  }
  absl::StatusOr<ProvenMaskChain> proven = Prove(request, &*cut, evaluator, options);
  memo->Add(key, proven);
  return proven;
}

namespace {

// A bool padding input may pad where it is true (PyTorch's key_padding_mask)
// rather than where it is false: when the chain is not proven with false
// padding, it is probed again with every pattern's values negated.
absl::StatusOr<ProvenMaskChain> Prove(const MaskChainRequest& request, ShapeSubgraph* cut,
                                      const SubgraphEvaluator& evaluator, const ExecOptions& options) {
  absl::StatusOr<ProvenMaskChain> proven = ProveWithPolarity(request, cut, evaluator, options, false);
  const std::vector<const Value*>& sources = cut->value_sources();
  if (proven.ok() || sources.empty() || sources.back()->type() != ElementType::kBool ||
      sources.size() != (request.bias != nullptr ? 3u : 2u))
    return proven;
  absl::StatusOr<ProvenMaskChain> inverted = ProveWithPolarity(request, cut, evaluator, options, true);
  if (!inverted.ok()) return proven;
  inverted->padding_true_pads = true;
  return inverted;
}

absl::StatusOr<ProvenMaskChain> ProveWithPolarity(const MaskChainRequest& request, ShapeSubgraph* cut,
                                                  const SubgraphEvaluator& evaluator, const ExecOptions& options,
                                                  bool true_pads) {
  const std::vector<const Value*>& value_sources = cut->value_sources();
  const size_t first_input = request.bias != nullptr ? 2 : 1;  // after the scores (and the bias)
  const Value* padding = nullptr;
  if (value_sources.size() > first_input + 1) {
    std::vector<std::string> names;
    for (size_t k = first_input; k < value_sources.size(); ++k)
      names.push_back(absl::StrCat("'", value_sources[k]->name(), "'"));
    return NotCausal(absl::StrCat("mask reads the values of several inputs (", absl::StrJoin(names, ", "), ")"));
  }
  if (value_sources.size() < first_input)
    return NotCausal("the mask chain does not read the bias it was given");
  if (value_sources.size() == first_input + 1) {
    padding = value_sources[first_input];
    if (!padding->shape().has_value() || padding->shape()->size() != 2)
      return NotCausal(absl::StrCat("mask reads the values of input '", padding->name(),
                                    "', which is not 2-D (batch, keys) like a padding mask"));
  }
  const ElementType score_type =
      request.scores->type() == ElementType::kUndefined ? ElementType::kFloat32 : request.scores->type();
  if (score_type != ElementType::kFloat32 && score_type != ElementType::kFloat16 &&
      score_type != ElementType::kBFloat16)
    return NotCausal(absl::StrCat("the scores are ", ElementTypeName(score_type)));
  const bool half = score_type != ElementType::kFloat32;
  // 2^20 is exact in float32 and far below finfo.min's spacing (2^104), so
  // s + finfo.min reads as the constant it is for every ordinary score; in
  // 16 bits the largest power of two whose neighbours are one unit apart
  // (float16 2^10, bfloat16 2^7), and its relative spacing.
  const double c = score_type == ElementType::kFloat16    ? 1024.0
                   : score_type == ElementType::kBFloat16 ? 128.0
                                                          : 1048576.0;
  const double eps = 1.0 / c;

  std::vector<const Value*> symbol_sources = cut->sources();
  if (padding != nullptr) symbol_sources.push_back(padding);
  ASSIGN_OR_RETURN(ProbePlan plan, PlanProbes(request.dims, symbol_sources));
  std::optional<std::string> padding_keys_symbol;
  if (padding != nullptr && IsPlainSymbol((*padding->shape())[1])) {
    const std::string& s = (*padding->shape())[1].symbol();
    if (plan.other_symbols.erase(s) > 0) padding_keys_symbol = s;  // a free symbol: the probe sets it to the keys
  }
  ASSIGN_OR_RETURN(const ProbeLengths lengths, ProbeLengthsOf(*cut));
  const std::vector<Probe> sizes = ProbeSizes(plan, lengths.lengths, cut->sliced_buffer_length());
  if (sizes.empty()) return NotCausal("mask cannot be probed: no probe size fits its buffer");

  ProvenMaskChain proven;
  proven.key_padding = padding;
  proven.nonzero_shows = padding != nullptr && padding->type() != ElementType::kBool;
  proven.fills.fill(-std::numeric_limits<float>::infinity());
  proven.part_fills.fill(-std::numeric_limits<float>::infinity());
  std::array<bool, 3>& seen = proven.fill_seen;
  struct Sized {
    Probe probe;
    int64_t kv, batch;
    DimBinding binding;
    int64_t padding_keys = 0;  // the padding input's last dim: kv, or 1 where it is broadcast
  };
  std::vector<Sized> runnable;
  for (const Probe& p : sizes) {
    DimBinding binding = BindingFor(plan, p, request.dims);
    auto kv = binding.Evaluate(request.dims.kv_len);
    if (!kv) return NotCausal(absl::StrCat("cannot size the key length ", request.dims.kv_len.ToString(), " at ", p.Label()));
    if (*kv < p.t) continue;
    int64_t batch = 1;
    if (padding != nullptr) {
      if (padding_keys_symbol) binding.Bind(*padding_keys_symbol, *kv);
      auto dims = binding.Evaluate(*padding->shape());
      if (!dims) return NotCausal(absl::StrCat("cannot size the padding input '", padding->name(), "' at ", p.Label()));
      // The fused op reads one entry per key; a padding input that
      // broadcasts over the keys, or follows another length, is not that.
      if ((*dims)[1] != *kv)
        return NotCausal(absl::StrCat("the padding input '", padding->name(), "' has ", (*dims)[1], " keys at ",
                                      p.Label(), " where the scores have ", *kv));
      batch = (*dims)[0];
      if (batch < 1) continue;
    }
    Probe actual = p;
    actual.past = *kv - p.t;
    runnable.push_back({actual, *kv, batch, std::move(binding), *kv});
  }
  if (runnable.empty()) return NotCausal("mask cannot be probed: no probe size has as many keys as queries");

  auto evaluate_at = [&](const Sized& z, const PaddingPattern* pattern, Tensor scores) -> absl::StatusOr<Tensor> {
    std::vector<Tensor> values;
    values.push_back(std::move(scores));
    if (request.bias != nullptr) {
      // Zero at every entry (Create zero-fills); all dims 1, so it broadcasts whatever its real shape is.
      const ElementType bias_type = request.bias->type() == ElementType::kUndefined ? score_type : request.bias->type();
      ASSIGN_OR_RETURN(Tensor zero, Tensor::Create(bias_type, std::vector<int64_t>(RankOfBias(request.bias), 1),
                                                   options.max_tensor_bytes));
      values.push_back(std::move(zero));
    }
    if (padding != nullptr) {
      std::vector<double> negated;
      if (true_pads)
        for (double x : pattern->values) negated.push_back(x == 0.0 ? 1.0 : 0.0);
      ASSIGN_OR_RETURN(Tensor m, MaskTensor(padding->type(), z.batch, z.padding_keys,
                                            true_pads ? negated : pattern->values, options));
      values.push_back(std::move(m));
    }
    auto out = cut->Evaluate(z.binding, evaluator, options, std::move(values));
    if (!out.ok())
      return NotCausal(absl::StrCat("mask evaluation failed at ", z.probe.Label(),
                                    pattern != nullptr ? absl::StrCat(" with ", pattern->name) : "", ": ",
                                    out.status().message()));
    return out;
  };
  auto evaluate = [&](const Sized& z, const PaddingPattern* pattern, double score) -> absl::StatusOr<Tensor> {
    ASSIGN_OR_RETURN(Tensor s, ScoresTensor(score_type, request.rank, z.probe.t, z.kv, static_cast<float>(score), options));
    return evaluate_at(z, pattern, std::move(s));
  };
  auto read = [&](const Sized& z, const PaddingPattern* pattern) -> absl::StatusOr<Reading> {
    ASSIGN_OR_RETURN(Tensor at0, evaluate(z, pattern, 0.0));
    ASSIGN_OR_RETURN(Tensor atc, evaluate(z, pattern, c));
    ASSIGN_OR_RETURN(Reading r, Classify(at0, atc, c, eps, z.probe, z.kv, z.batch, padding != nullptr));
    for (size_t k = 0; k < r.entries.size() && proven.fills_absorb_bias; ++k) {
      const bool weak = r.entries[k] == Entry::kHiddenOffset ||
                        (r.entries[k] == Entry::kHiddenConstant && !(r.constants[k] <= kBiasAbsorbingFill));
      if (!weak) continue;
      proven.fills_absorb_bias = false;
      proven.weak_fill = r.entries[k] == Entry::kHiddenOffset
                             ? absl::StrCat("a hidden key's score is the score plus an offset at ", z.probe.Label())
                             : absl::StrCat("a hidden key's score is ", r.constants[k], " at ", z.probe.Label());
    }
    return r;
  };

  // 1. The structure, from every size with nothing padded.
  std::vector<Evaluated> structure_probes;
  std::vector<std::vector<PaddingPattern>> patterns(runnable.size());
  for (size_t k = 0; k < runnable.size(); ++k) {
    const Sized& z = runnable[k];
    patterns[k] = PatternsFor(z.batch, z.kv, padding != nullptr && padding->type() != ElementType::kBool);
    ASSIGN_OR_RETURN(Reading r, read(z, padding != nullptr ? &patterns[k][0] : nullptr));
    Evaluated e;
    e.probe = z.probe;
    e.slices = r.slices;
    e.rows = r.rows;
    e.cols = r.cols;
    e.blocked.resize(r.entries.size());
    for (size_t x = 0; x < r.entries.size(); ++x) e.blocked[x] = r.entries[x] != Entry::kVisible;
    structure_probes.push_back(std::move(e));
    proven.longest_probe = std::max(proven.longest_probe, z.kv);
  }
  ASSIGN_OR_RETURN(const Structure structure, StructureOf(structure_probes));
  const Structural st{structure.open, structure.window};
  proven.open = structure.open;
  proven.window = structure.window;
  proven.probes = static_cast<int>(runnable.size());
  proven.longest_constant = lengths.longest_constant;

  // 5. 16-bit scores: s + finfo(float16).min rounds in steps of 32 (s + -1e4
  // in bfloat16 in steps of 64), which decides the weights of a row whose
  // every key is hidden, and a clamp (torch.max(w, min)) decides what
  // overflowed scores give. The chain is read at every score of its type, at
  // the first small sizes with each 0/1 pattern (without a padding input,
  // once), and the fused op computes such rows as it reads them
  // (ProvenMaskChain::half).
  auto sweep = [&]() -> std::optional<std::string> {
    const char* type_name = ElementTypeName(score_type);
    int swept = 0;
    for (size_t k = 0; k < runnable.size() && k < kAlwaysPaddedSizes + 2 && swept < kHalfSweepSizes; ++k) {
      const Sized& z = runnable[k];
      if (z.probe.t < 2 || z.kv < 2 || z.probe.t * z.kv > kHalfSweepEntries) continue;
      if (request.rank != 4)
        return absl::StrCat(type_name, " scores of rank 3: the mask cannot be read at every score");
      ++swept;
      const size_t count = padding != nullptr ? patterns[k].size() : 1;
      for (size_t q = 0; q < count; ++q) {
        const PaddingPattern* pattern = padding != nullptr ? &patterns[k][q] : nullptr;
        if (pattern != nullptr && pattern->other_values) continue;
        auto scores = HalfSweepScores(score_type, z.probe.t, z.kv, options.max_tensor_bytes);
        if (!scores.ok()) return std::string(scores.status().message());
        auto out = evaluate_at(z, pattern, *std::move(scores));
        if (!out.ok()) return std::string(out.status().message());
        const int64_t offset = z.kv - z.probe.t;
        auto class_of = [&](int64_t b, int64_t i, int64_t j) {
          const bool padded = pattern != nullptr && pattern->values[b * z.kv + j] == 0.0;
          const bool structural = st.Hides(i, j, offset);
          return structural && padded ? 3 : structural ? 1 : padded ? 2 : 0;
        };
        // Without a padding input every leading slice is read as a batch of its own.
        const int64_t batch = padding != nullptr || out->rank() != 4 ? z.batch : out->shape()[0];
        if (auto why = ReadHalfSweep(score_type, *out, batch, class_of, proven.half_functions))
          return absl::StrCat(*why, " (", z.probe.Label(), pattern != nullptr ? " with " + pattern->name : "", ")");
      }
    }
    if (swept == 0)
      return absl::StrCat(type_name, " mask: no probe size small enough to read it at every ", type_name, " score");
    proven.half = true;
    proven.score_type = score_type;
    const HalfMaskFunctions& f = proven.half_functions;
    for (int part = 0; part < 3; ++part) {
      if (!f.seen[part + 1]) continue;
      proven.fill_seen[part] = true;
      proven.fills[part] = f.fill[part + 1];
      proven.fill_adds_score[part] = f.adds[part + 1];
    }
    return std::nullopt;
  };

  // 3. Whether a NaN or +inf score at a hidden key reaches the softmax, by
  // what hides it: at the sizes the padding budget allows (the first may
  // hide nothing, a single query row), unpadded and with each 0/1 pattern.
  std::array<std::optional<bool>, 3> kept;
  for (size_t k = 0; k < runnable.size(); ++k) {
    const Sized& z = runnable[k];
    if (k >= kAlwaysPaddedSizes && z.probe.t * z.kv > kMaxPaddingProbeEntries) continue;
    const size_t count = padding != nullptr ? patterns[k].size() : 1;
    for (size_t q = 0; q < count; ++q) {
      const PaddingPattern* pattern = padding != nullptr ? &patterns[k][q] : nullptr;
      if (pattern != nullptr && pattern->other_values) continue;
      ASSIGN_OR_RETURN(Reading r, read(z, pattern));
      if (request.bias != nullptr) {
        if (auto why = CollectPartFills(r, st, pattern != nullptr ? &pattern->values : nullptr, z.batch, z.probe,
                                        proven))
          return NotCausal(*why);
      }
      ASSIGN_OR_RETURN(Tensor at_nan, evaluate(z, pattern, std::numeric_limits<double>::quiet_NaN()));
      if (auto why = ReadNonFinite(at_nan, r, st, pattern != nullptr ? &pattern->values : nullptr, z.batch, z.probe,
                                   kept))
        return NotCausal(*why);
    }
  }
  proven.keeps_nonfinite = {kept[0].value_or(true), kept[1].value_or(true)};
  // Keys both parts hide keep a NaN only if each part adds to the score.
  if (kept[2] && *kept[2] != (proven.keeps_nonfinite[0] && proven.keeps_nonfinite[1]))
    return NotCausal("a NaN score at keys both parts hide does not follow the two parts alone");
  if (padding == nullptr) {
    if (half)
      if (auto why = sweep()) return NotCausal(*why);
    return proven;
  }

  // 2. The padding, pattern by pattern, at the sizes the budget allows.
  for (size_t k = 0; k < runnable.size(); ++k) {
    const Sized& z = runnable[k];
    if (k >= kAlwaysPaddedSizes && z.probe.t * z.kv > kMaxPaddingProbeEntries) continue;
    for (size_t q = 1; q < patterns[k].size(); ++q) {
      const PaddingPattern& pattern = patterns[k][q];
      auto r = read(z, &pattern);
      std::optional<std::string> why;
      if (!r.ok()) {
        why = std::string(r.status().message());
      } else {
        why = FirstDifference(*r, st, &pattern.values, z.batch, z.probe, pattern.name);
      }
      if (pattern.other_values) {
        // Not an error: the fused op then refuses values other than 0 and 1.
        if (why) proven.nonzero_shows = false;
        continue;
      }
      if (why) return NotCausal(*why);
      ++proven.probes;
      if (auto bad = CollectFills(*r, st, &pattern.values, z.batch, z.probe, proven, seen)) return NotCausal(*bad);
    }
  }
  // 4. A padding input whose length is a symbol of its own (attention_mask's
  // total_seq beside a cache's past + seq): ONNX broadcasts a length of 1 into
  // every key, which the fused op does only where the chain does so at every
  // size that has more than one key; where the chain refuses one key at every
  // such size, the fused op refuses it too.
  if (padding_keys_symbol) {
    int broadcast = 0, refused = 0;
    std::string refusal;
    for (size_t k = 0; k < runnable.size(); ++k) {
      Sized z = runnable[k];
      if (z.kv < 2 || (k >= kAlwaysPaddedSizes && z.probe.t * z.kv > kMaxPaddingProbeEntries)) continue;
      z.padding_keys = 1;
      z.binding.Bind(*padding_keys_symbol, 1);
      for (const PaddingPattern& one : PatternsFor(z.batch, 1, false)) {
        PaddingPattern every_key{one.name + " of one key", {}};
        for (int64_t b = 0; b < z.batch; ++b) every_key.values.insert(every_key.values.end(), z.kv, one.values[b]);
        // Refused: the chain fails to compute. Computed, it must be the broadcast mask.
        if (absl::StatusOr<Tensor> at0 = evaluate(z, &one, 0.0); !at0.ok()) {
          if (refusal.empty()) refusal = std::string(at0.status().message());
          ++refused;
          continue;
        }
        ++broadcast;
        auto r = read(z, &one);
        if (!r.ok()) return r.status();
        if (auto why = FirstDifference(*r, st, &every_key.values, z.batch, z.probe, every_key.name))
          return NotCausal(*why);
        if (auto bad = CollectFills(*r, st, &every_key.values, z.batch, z.probe, proven, seen)) return NotCausal(*bad);
        if (request.bias != nullptr)
          if (auto why = CollectPartFills(*r, st, &every_key.values, z.batch, z.probe, proven)) return NotCausal(*why);
        ASSIGN_OR_RETURN(Tensor at_nan, evaluate(z, &one, std::numeric_limits<double>::quiet_NaN()));
        if (auto why = ReadNonFinite(at_nan, *r, st, &every_key.values, z.batch, z.probe, kept)) return NotCausal(*why);
      }
    }
    if (broadcast > 0 && refused > 0)
      return NotCausal(absl::StrCat("with a padding input of one key the mask is computed at some sizes and not at "
                                    "others (", refusal, ")"));
    if (broadcast > 0) proven.padding_length = mha::KeyPaddingLength::kBroadcast;
    if (kept[2] && *kept[2] != (kept[0].value_or(true) && kept[1].value_or(true)))
      return NotCausal("a NaN score at keys both parts hide does not follow the two parts alone");
    proven.keeps_nonfinite = {kept[0].value_or(true), kept[1].value_or(true)};
  }
  if (half)
    if (auto why = sweep()) return NotCausal(*why);
  return proven;
}

}  // namespace

}  // namespace attune::attention
