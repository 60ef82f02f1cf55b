#include "engine/generate/signature.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/ir/dim.h"
#include "engine/session_access.h"

namespace attune {
namespace {

// What a tensor name says about itself: exporters spell the same thing as
// past_key_values.3.key, past_key_3, past.3.key or past_3 (key and value in one).
struct NameParts {
  bool cache_like = false;    // mentions past or cache
  bool present_like = false;  // mentions present
  int layer = -1;             // first number in the name
  std::string kind = "kv";    // key, value, or kv when neither is named
  std::string part;           // "encoder" for a cross-attention cache, "decoder" when named so
};

std::vector<std::string> Words(const std::string& name) {
  std::vector<std::string> words;
  std::string word;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

NameParts ParseName(const std::string& name) {
  NameParts parts;
  const std::vector<std::string> words = Words(name);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    // "key_values" names the collection, not a kind: GPTBigCode's
    // "past_key_values.0" holds key and value in one tensor.
    if (w == "key" && i + 1 < words.size() && words[i + 1] == "values") {
      ++i;
      continue;
    }
    // "past_key_values.0.key" then says its kind after it: the last kind word names the tensor.
    if (w == "key" || w == "keys" || w == "k") parts.kind = "key";
    if (w == "value" || w == "values" || w == "v") parts.kind = "value";
    if (w.find("past") != std::string::npos || w.find("cache") != std::string::npos) parts.cache_like = true;
    if (w.find("present") != std::string::npos) parts.present_like = true;
    if (w == "encoder" || w == "cross") parts.part = "encoder";
    if (w == "decoder" || w == "self") parts.part = "decoder";
    if (parts.layer < 0 && std::all_of(w.begin(), w.end(), [](char c) { return std::isdigit(c); }) && w.size() < 6)
      parts.layer = std::stoi(w);
  }
  return parts;
}

bool IsFloat(ElementType t) {
  return t == ElementType::kFloat32 || t == ElementType::kFloat16 || t == ElementType::kBFloat16;
}
bool IsInt(ElementType t) { return t == ElementType::kInt64 || t == ElementType::kInt32; }

bool Contains(const std::string& name, std::string_view part) {
  std::string lower;
  for (char c : name) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return lower.find(part) != std::string::npos;
}

std::string Names(const std::vector<TensorInfo>& infos) {
  std::vector<std::string> names;
  for (const TensorInfo& i : infos) names.push_back(EscapeControl(i.name));
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

// The first input whose name satisfies `match`, among those not taken.
std::string FindRole(const std::vector<TensorInfo>& infos, const std::set<std::string>& taken,
                     const std::function<bool(const TensorInfo&)>& match) {
  for (const TensorInfo& i : infos)
    if (!taken.count(i.name) && match(i)) return i.name;
  return "";
}

const TensorInfo* Find(const std::vector<TensorInfo>& infos, const std::string& name) {
  for (const TensorInfo& i : infos)
    if (i.name == name) return &i;
  return nullptr;
}

// The atom names of an expression (a minimum by its text).
std::set<std::string> AtomNames(const DimExpr& e) {
  std::set<std::string> names;
  for (const auto& [monomial, coefficient] : e.terms())
    for (const DimAtom& atom : monomial) names.insert(atom.text());
  return names;
}

// `is` = `was` plus a sum of other dims (past_seq -> past_seq+seq), not a
// multiple of it (batch -> 4*batch) nor another symbol.
bool GrowsByOtherDims(const std::string& was, const std::string& is) {
  if (was.empty() || is.empty() || was == is) return false;
  const Dim before = Dim::Symbol(was), after = Dim::Symbol(is);
  if (!before.is_symbol() || !after.is_symbol()) return false;
  const std::optional<DimExpr> grown = DimExpr::Sub(*after.expr(), *before.expr());
  if (!grown || grown->is_constant() || !grown->IsNonNegative()) return false;
  const std::set<std::string> own = AtomNames(*before.expr());
  for (const std::string& name : AtomNames(*grown))
    if (own.contains(name)) return false;
  return true;
}

// The axis that grows from past to present: where the two shapes disagree
// (different symbols or sizes). With nothing to tell them apart, the layout
// every exporter uses: (B, H, S, D) -> 2, (2, B, H, S, D) -> 3.
int SeqAxis(const TensorInfo* past, const TensorInfo& present) {
  const int rank = present.has_shape ? static_cast<int>(present.shape.size()) : 4;
  if (past != nullptr && past->has_shape && present.has_shape && past->shape.size() == present.shape.size()) {
    // A length that grows by the new tokens (past_seq -> past_seq+seq)
    // first: BLOOM's present (batch*heads, D, past+seq) names its batch dim
    // apart from the past's too. Then a length symbolic in both (past_seq ->
    // total_seq): torch names a present's dims it could not infer
    // ("Reshapepresent.0.key_dim_1") where the past has a number. Then any
    // symbolic length; a static size that differs is a wrong pairing unless
    // nothing else grows.
    const bool named = static_cast<int>(past->shape_symbols.size()) == rank &&
                       static_cast<int>(present.shape_symbols.size()) == rank;
    for (int d = 0; named && d < rank; ++d) {
      const std::string& was = past->shape_symbols[d];
      const std::string& is = present.shape_symbols[d];
      if (GrowsByOtherDims(was, is)) return d;
    }
    for (int d = 0; named && d < rank; ++d)
      if (past->shape[d] < 0 && present.shape[d] < 0 && past->shape_symbols[d] != present.shape_symbols[d]) return d;
    for (int d = 0; d < rank; ++d)
      if ((past->shape[d] < 0 || present.shape[d] < 0) &&
          (past->shape[d] != present.shape[d] || past->shape_symbols[d] != present.shape_symbols[d]))
        return d;
    for (int d = 0; d < rank; ++d)
      if (past->shape[d] != present.shape[d]) return d;
  }
  return rank >= 5 ? 3 : std::min(2, rank - 1);
}

// Whether a past input and a present output can hold the same cache: same
// rank, and every static dimension equal except on the sequence axis.
bool ShapesPair(const TensorInfo& past, const TensorInfo& present) {
  if (past.type != present.type) return false;
  if (!past.has_shape || !present.has_shape) return true;
  if (past.shape.size() != present.shape.size()) return false;
  const int axis = SeqAxis(&past, present);
  for (size_t d = 0; d < past.shape.size(); ++d)
    if (static_cast<int>(d) != axis && past.shape[d] >= 0 && present.shape[d] >= 0 && past.shape[d] != present.shape[d])
      return false;
  return true;
}

CacheBinding MakeBinding(const TensorInfo* past, const TensorInfo& present, int order) {
  CacheBinding b;
  b.past = past != nullptr ? past->name : "";
  b.present = present.name;
  const NameParts parts = ParseName(present.name);
  const NameParts past_parts = past != nullptr ? ParseName(past->name) : parts;
  b.layer = parts.layer >= 0 ? parts.layer : past_parts.layer >= 0 ? past_parts.layer : order;
  b.kind = parts.kind != "kv" ? parts.kind : past_parts.kind;
  b.seq_axis = SeqAxis(past, present);
  return b;
}

// Pairs past inputs with present outputs: in order when the user gave the
// pairs, else by (layer, kind) read from the names when that is unambiguous on
// both sides, else in order; every pair must agree in shape.
// Past inputs named for the encoder whose names no present output shares:
// the cross-attention cache a seq2seq decoder with past reads unchanged.
std::vector<const TensorInfo*> EncoderCache(const std::vector<const TensorInfo*>& pasts,
                                            const std::vector<const TensorInfo*>& presents) {
  std::set<std::tuple<int, std::string, std::string>> present_keys;
  for (const TensorInfo* o : presents) {
    const NameParts p = ParseName(o->name);
    present_keys.emplace(p.layer, p.part, p.kind);
  }
  std::vector<const TensorInfo*> encoder;
  for (const TensorInfo* i : pasts) {
    const NameParts p = ParseName(i->name);
    if (p.part == "encoder" && !present_keys.count({p.layer, p.part, p.kind})) encoder.push_back(i);
  }
  return encoder;
}

absl::StatusOr<std::vector<CacheBinding>> PairCache(const std::vector<const TensorInfo*>& pasts,
                                                    const std::vector<const TensorInfo*>& presents, bool in_order) {
  std::vector<CacheBinding> bindings;
  if (pasts.size() != presents.size())
    return absl::InvalidArgumentError(absl::StrCat("found ", pasts.size(), " past inputs but ", presents.size(),
                                                   " present outputs; pair them with --map PAST=PRESENT"));
  auto keyed = [](const std::vector<const TensorInfo*>& infos) {
    std::map<std::pair<int, std::string>, const TensorInfo*> by_key;
    for (const TensorInfo* i : infos) {
      const NameParts p = ParseName(i->name);
      if (p.layer < 0 || !by_key.emplace(std::make_pair(p.layer, p.part + p.kind), i).second) return decltype(by_key){};
    }
    return by_key;
  };
  const auto past_keys = keyed(pasts), present_keys = keyed(presents);
  bool by_name = !in_order && past_keys.size() == pasts.size() && present_keys.size() == presents.size();
  if (by_name)
    for (const auto& [key, info] : past_keys) by_name &= present_keys.count(key) > 0;
  for (size_t i = 0; i < pasts.size(); ++i) {
    const TensorInfo* past = pasts[i];
    const TensorInfo* present =
        by_name ? present_keys.at(std::make_pair(ParseName(past->name).layer,
                                                 ParseName(past->name).part + ParseName(past->name).kind))
                : presents[i];
    if (!ShapesPair(*past, *present))
      return absl::InvalidArgumentError(absl::StrCat("past input ", QuoteName(past->name), " and present output ",
                                                     QuoteName(present->name), " differ in type or shape"));
    bindings.push_back(MakeBinding(past, *present, static_cast<int>(i)));
  }
  return bindings;
}

// Rows of the 2-D constant tables read by Gather: the one indexed by input_ids
// is the token embedding (vocabulary), the smallest other one the position
// embedding (context).
void FindTableSizes(const Graph& graph, const std::string& input_ids, DecoderSignature& sig) {
  int64_t context = -1;
  for (const Node* node : graph.nodes()) {
    if (node->op_type() != "Gather" || node->domain() != "" || node->num_inputs() < 2) continue;
    const Value* data = node->input(0);
    const Value* indices = node->input(1);
    if (data == nullptr || indices == nullptr || data->constant() == nullptr ||
        data->constant()->rank() != 2)
      continue;
    if (!IsFloat(data->constant()->type())) continue;
    const absl::StatusOr<int64_t> axis = node->attributes().GetInt("axis", 0);
    if (!axis.ok() || *axis != 0) continue;
    const int64_t rows = data->constant()->shape()[0];
    if (indices->is_graph_input() && indices->name() == input_ids) {
      if (sig.vocab_size < 0) sig.vocab_size = rows;
    } else if (!indices->is_constant()) {
      context = context < 0 ? rows : std::min(context, rows);
    }
  }
  sig.context = context;
}

// Whether the values of input `mask` reach a CumSum before any product or
// softmax: positions counted from the mask (cumsum(attention_mask) - 1),
// rather than the mask only hiding keys in the attention.
bool PositionsFromMask(const Graph& graph, const std::string& mask) {
  const Value* start = nullptr;
  for (const Value* v : graph.inputs())
    if (v->name() == mask) start = v;
  if (start == nullptr) return false;
  std::vector<const Value*> todo{start};
  std::set<const Value*> seen{start};
  while (!todo.empty()) {
    const Value* v = todo.back();
    todo.pop_back();
    for (const Use& edge : v->uses()) {
      const Node* use = edge.node;
      const std::string& op = use->op_type();
      if (op == "CumSum") return true;
      if (op == "MatMul" || op == "Gemm" || op == "Softmax" || op == "Einsum" || use->domain() != "") continue;
      for (const Value* out : use->outputs())
        if (out != nullptr && seen.insert(out).second) todo.push_back(out);
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<DecoderSignature> FindSignature(const std::vector<TensorInfo>& inputs,
                                               const std::vector<TensorInfo>& outputs, const Graph* graph,
                                               const NameOverrides& overrides, bool require_past) {
  DecoderSignature sig;
  std::vector<std::pair<std::string, std::string>> cache_overrides;
  for (const auto& [from, to] : overrides) {
    std::string* role = from == "input_ids"        ? &sig.input_ids
                        : from == "attention_mask" ? &sig.attention_mask
                        : from == "position_ids"   ? &sig.position_ids
                        : from == "logits"         ? &sig.logits
                                                   : nullptr;
    const bool is_output = from == "logits";
    if (role != nullptr) {
      if (Find(is_output ? outputs : inputs, to) == nullptr)
        return absl::InvalidArgumentError(absl::StrCat("--map ", from, "=", to, ": the model has no ",
                                                       is_output ? "output " : "input ", QuoteName(to)));
      *role = to;
      continue;
    }
    if (Find(inputs, from) == nullptr)
      return absl::InvalidArgumentError(
          absl::StrCat("--map ", from, "=", to, ": the model has no input ", QuoteName(from)));
    if (Find(outputs, to) == nullptr)
      return absl::InvalidArgumentError(
          absl::StrCat("--map ", from, "=", to, ": the model has no output ", QuoteName(to)));
    cache_overrides.emplace_back(from, to);
  }

  std::set<std::string> taken;
  for (const std::string* n : {&sig.input_ids, &sig.attention_mask, &sig.position_ids})
    if (!n->empty()) taken.insert(*n);
  if (sig.attention_mask.empty())
    sig.attention_mask = FindRole(inputs, taken, [](const TensorInfo& i) { return Contains(i.name, "mask"); });
  if (!sig.attention_mask.empty()) taken.insert(sig.attention_mask);
  if (sig.position_ids.empty())
    sig.position_ids =
        FindRole(inputs, taken, [](const TensorInfo& i) { return IsInt(i.type) && Contains(i.name, "position"); });
  if (!sig.position_ids.empty()) taken.insert(sig.position_ids);
  if (sig.input_ids.empty()) {
    sig.input_ids = FindRole(inputs, taken, [](const TensorInfo& i) {
      return IsInt(i.type) && (Contains(i.name, "input_ids") || Contains(i.name, "ids") || Contains(i.name, "token"));
    });
    // A graph with one integer matrix input: that is the tokens, whatever its name.
    if (sig.input_ids.empty())
      sig.input_ids = FindRole(
          inputs, taken, [](const TensorInfo& i) { return IsInt(i.type) && (!i.has_shape || i.shape.size() == 2); });
  }
  if (sig.input_ids.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("not a decoder: no token ids input (int64/int32 input_ids); inputs: ", Names(inputs)));
  taken.insert(sig.input_ids);

  // Cache pairs: the overrides, else past/cache-named float inputs with
  // present-named (or past-named) float outputs, else by shape alone.
  std::vector<const TensorInfo*> pasts, presents;
  std::set<std::string> present_names;
  if (!cache_overrides.empty()) {
    for (const auto& [past, present] : cache_overrides) {
      pasts.push_back(Find(inputs, past));
      presents.push_back(Find(outputs, present));
    }
  } else {
    for (const TensorInfo& i : inputs)
      if (!taken.count(i.name) && IsFloat(i.type) && ParseName(i.name).cache_like) pasts.push_back(&i);
    for (const TensorInfo& o : outputs) {
      const NameParts p = ParseName(o.name);
      if (IsFloat(o.type) && (p.present_like || p.cache_like) && !Contains(o.name, "logit")) presents.push_back(&o);
    }
    if (pasts.empty() && presents.empty()) {
      // No names to go by: float inputs of rank >= 3 other than the roles, and
      // as many float outputs of the same ranks after the first (the logits).
      for (const TensorInfo& i : inputs)
        if (!taken.count(i.name) && IsFloat(i.type) && i.has_shape && i.shape.size() >= 3) pasts.push_back(&i);
      if (!pasts.empty())
        for (const TensorInfo& o : outputs)
          if (IsFloat(o.type) && o.has_shape && o.shape.size() == pasts[0]->shape.size() && o.name != outputs[0].name)
            presents.push_back(&o);
    }
  }
  for (const TensorInfo* p : presents) present_names.insert(p->name);

  if (sig.logits.empty()) {
    sig.logits = FindRole(outputs, present_names, [](const TensorInfo& o) { return Contains(o.name, "logit"); });
    if (sig.logits.empty())
      sig.logits = FindRole(outputs, present_names, [](const TensorInfo& o) { return IsFloat(o.type); });
  }
  if (sig.logits.empty())
    return absl::InvalidArgumentError(absl::StrCat("not a decoder: no logits output; outputs: ", Names(outputs)));

  if (require_past) {
    if (pasts.empty() || presents.empty())
      return absl::InvalidArgumentError(
          absl::StrCat("not a decoder with a KV cache: no past/present key-value pairs (inputs: ", Names(inputs),
                       "; outputs: ", Names(outputs), "); pair them with --map PAST=PRESENT"));
    if (cache_overrides.empty() && pasts.size() > presents.size()) {
      const std::vector<const TensorInfo*> encoder = EncoderCache(pasts, presents);
      if (pasts.size() - encoder.size() == presents.size()) {
        for (const TensorInfo* e : encoder) {
          sig.encoder_cache.push_back(e->name);
          pasts.erase(std::find(pasts.begin(), pasts.end(), e));
        }
      }
    }
    ASSIGN_OR_RETURN(sig.cache, PairCache(pasts, presents, /*in_order=*/!cache_overrides.empty()));
  } else {
    if (!pasts.empty())
      return absl::InvalidArgumentError("the prefill model takes past inputs; give it as the only model");
    if (presents.empty())
      return absl::InvalidArgumentError(
          absl::StrCat("the prefill model returns no present key/value outputs; outputs: ", Names(outputs)));
    for (size_t i = 0; i < presents.size(); ++i) sig.cache.push_back(MakeBinding(nullptr, *presents[i], i));
  }

  const TensorInfo* logits = Find(outputs, sig.logits);
  if (logits->has_shape && !logits->shape.empty() && logits->shape.back() > 0) sig.vocab_size = logits->shape.back();
  if (graph != nullptr) {
    FindTableSizes(*graph, sig.input_ids, sig);
    if (!sig.attention_mask.empty()) sig.positions_from_mask = PositionsFromMask(*graph, sig.attention_mask);
  }
  return sig;
}

absl::StatusOr<DecoderSignature> FindDecoderSignature(const Session& session, const NameOverrides& overrides,
                                                      bool require_past) {
  return FindSignature(session.inputs(), session.outputs(), &GetSessionImpl(session).graph(), overrides, require_past);
}

std::vector<std::string> DescribeDecoderSignature(const DecoderSignature& sig) {
  std::vector<std::string> lines;
  auto role = [&](const char* what, const std::string& name) {
    lines.push_back(absl::StrCat(what, "  ", name.empty() ? "(none)" : name));
  };
  role("input_ids     ", sig.input_ids);
  role("attention_mask", sig.attention_mask);
  if (sig.position_ids.empty() && sig.positions_from_mask) {
    lines.push_back(absl::StrCat("position_ids    (none: counted from ", sig.attention_mask, " by CumSum)"));
  } else {
    role("position_ids  ", sig.position_ids);
  }
  role("logits        ", sig.logits);
  lines.push_back(absl::StrCat("vocabulary      ", sig.vocab_size < 0 ? "unknown" : absl::StrCat(sig.vocab_size)));
  lines.push_back(absl::StrCat("context         ", sig.context < 0 ? "unknown" : absl::StrCat(sig.context)));
  for (const CacheBinding& b : sig.cache)
    lines.push_back(absl::StrCat("cache           ", b.past.empty() ? "(prefill)" : b.past, " -> ", b.present,
                                 "  (layer ", b.layer, " ", b.kind, ", axis ", b.seq_axis, ")"));
  return lines;
}

}  // namespace attune
