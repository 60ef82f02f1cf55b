#include "engine/passes/attention/attention_rule.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/schema/multi_head_attention.h"
#include "engine/passes/attention/bias_candidates.h"
#include "engine/passes/attention/broadcast_check.h"
#include "engine/passes/attention/mask_chain_proof.h"
#include "engine/passes/attention/mask_proof.h"
#include "engine/passes/attention/operands.h"
#include "engine/pattern/constants.h"
#include "engine/pattern/predicates.h"
#include "engine/rewrite/shape_subgraph.h"

namespace attune::attention {
namespace {

namespace c = captures;
using Reason = std::string;

std::string Quote(const Value* v) { return absl::StrCat("'", v->name(), "'"); }

std::optional<Reason> CheckSoftmaxAxis(const Graph& graph, const Node& softmax, int rank) {
  const int opset = graph.OpsetFor("");
  const int64_t default_axis = opset != 0 && opset < 13 ? 1 : -1;
  const int64_t axis = softmax.attributes().GetInt("axis", default_axis).value_or(default_axis);
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  // Before opset 13 Softmax flattens the dims from `axis` on: only axis = rank-1 is per key row.
  if (normalized != rank - 1)
    return absl::StrCat("softmax axis is not the key axis (axis ", axis, " of rank ", rank, ")");
  return std::nullopt;
}

// The product of the scale factors the variant captured under `prefixes`, or why there is none.
std::variant<double, Reason> ScaleFactor(const pattern::Match& m, std::initializer_list<const char*> prefixes) {
  double scale = 1.0;
  for (const char* prefix : prefixes) {
    for (const char* kind : {"_div", "_mul"}) {
      const Value* operand = m.value(absl::StrCat(prefix, kind));
      if (operand == nullptr) continue;
      const Tensor* t = pattern::ConstantOf(operand);
      if (t == nullptr) return Reason(absl::StrCat("scale is not a constant (", Quote(operand), ")"));
      auto x = pattern::UniformValue(*t);
      if (!x) return Reason(absl::StrCat("scale is not one number (", Quote(operand), ")"));
      scale = kind[1] == 'd' ? scale / *x : scale * *x;
    }
  }
  if (!std::isfinite(scale) || scale == 0.0) return Reason(absl::StrCat("scale ", scale, " is not finite and non-zero"));
  return scale;
}

// A one-number scale on Q's projection before the head split, x · c or x / c
// (Hugging Face OPT, BART, Whisper: q_proj(h) * head_dim ** -0.5), read by the
// split alone: the fused op may read x and take the factor as its own, as it
// takes a scale on the 4-D Q.
struct PreSplitScale {
  const Value* input = nullptr;
  double factor = 1.0;
};

std::optional<PreSplitScale> FindPreSplitScale(const Value* projection) {
  if (projection == nullptr || projection->uses().size() != 1 || projection->is_graph_output()) return std::nullopt;
  const Node* n = projection->producer();
  if (n == nullptr || !n->domain().empty() || n->num_inputs() != 2 || n->num_outputs() != 1) return std::nullopt;
  const bool div = n->op_type() == "Div";
  if (!div && n->op_type() != "Mul") return std::nullopt;
  for (int i = div ? 1 : 0; i < 2; ++i) {
    const Value* x = n->input(1 - i);
    const Tensor* t = pattern::ConstantOf(n->input(i));
    if (x == nullptr || t == nullptr || t->num_elements() != 1 || t->type() != projection->type()) continue;
    // x keeps the projection's shape (the one-element constant broadcasts it to nothing larger).
    if (!x->shape() || !projection->shape() || x->shape()->size() != projection->shape()->size() ||
        static_cast<size_t>(t->rank()) > x->shape()->size() || x->type() != projection->type())
      continue;
    auto value = pattern::UniformValue(*t);
    if (!value || !std::isfinite(*value) || *value == 0.0) continue;
    return PreSplitScale{x, div ? 1.0 / *value : *value};
  }
  return std::nullopt;
}

// Whether `to` holds every value of `of` exactly: the type itself, or a wider float.
bool HoldsEveryValueOf(ElementType to, ElementType of) {
  if (to == of || to == ElementType::kFloat64) return true;
  return to == ElementType::kFloat32 && (of == ElementType::kFloat16 || of == ElementType::kBFloat16);
}

// Every Cast the match looked through (around the softmax, or a no-op one
// between two steps) must lose nothing of the attention's type: the fused op
// computes in float32 and rounds once to that type, so a Cast to it or to a
// wider float is what it does, but a Cast to a narrower type (float32 scores
// or probabilities rounded to float16, float16 ones to bfloat16) changes
// values the fused op would not change.
std::optional<Reason> CheckCasts(const pattern::Match& m, ElementType type) {
  if (type == ElementType::kUndefined) return std::nullopt;
  for (const Node* n : m.nodes()) {
    if (n->op_type() != "Cast") continue;
    const ElementType to = static_cast<ElementType>(n->attributes().GetInt("to", 0).value_or(0));
    if (!HoldsEveryValueOf(to, type))
      return absl::StrCat(n->Describe(), " casts to ", ElementTypeName(to), ", which rounds the ",
                          ElementTypeName(type), " values of the attention: the fused op would not");
  }
  return std::nullopt;
}

// float16's largest finite value is 65504; a product of 65520 or more rounds to +inf.
constexpr double kFloat16Overflow = 65520.0;

struct Operands {
  HeadOperand q, k, v;
  /// Why K and V were read without a repeat or a KV cache the walk found for one of them.
  std::vector<std::string> notes;
};

std::variant<Operands, Reason> ResolveOperands(const pattern::Match& m, int rank, bool allow_repeat, bool allow_past) {
  ResolveOptions kv;
  kv.look_through_repeat = allow_repeat && rank == 4;
  kv.look_through_past = allow_past && rank == 4;
  absl::StatusOr<HeadOperand> k;
  if (const Value* kt = m.value(c::kKt)) {
    k = ResolveOperand(kt, SwapLastTwo(rank), rank, kv);
  } else {
    // Kᵀ = Transpose(K · scale): K is that tensor under the transpose's perm
    // composed with the swap, which needs the perm itself (never a guess).
    const Node& t = *m.node(c::kKtTranspose);
    absl::StatusOr<Perm> perm = pattern::TransposePerm(t);
    if (!perm.ok()) return Reason(absl::StrCat("cannot read K through ", t.Describe(), ": ", perm.status().message()));
    const std::optional<Perm> k_perm = ComposePerms(*perm, SwapLastTwo(rank));
    if (!k_perm)
      return Reason(absl::StrCat("cannot read K through ", t.Describe(), ": it permutes ", perm->size(),
                                 " dims, the scores have ", rank));
    k = ResolveOperand(m.value(c::kKtBase), *k_perm, rank, kv);
  }
  absl::StatusOr<HeadOperand> q = ResolveOperand(m.value(c::kQ), {}, rank, {});
  absl::StatusOr<HeadOperand> v = ResolveOperand(m.value(c::kV), {}, rank, kv);
  for (const absl::StatusOr<HeadOperand>* op : {&q, &k, &v})
    if (!op->ok()) return Reason(std::string(op->status().message()));
  return Operands{*std::move(q), *std::move(k), *std::move(v), {}};
}

using NamedOperand = std::pair<const char*, const HeadOperand*>;

// What the operand walks noted, for a rejection that follows from what they
// found: " (K and V ...; V: not a grouped head repeat: ...)", or nothing.
std::string WalkNotes(const Operands& ops, std::initializer_list<NamedOperand> operands) {
  std::vector<std::string> parts = ops.notes;
  for (const auto& [name, op] : operands)
    for (const std::string& miss : op->misses) parts.push_back(absl::StrCat(name, ": ", miss));
  return parts.empty() ? "" : absl::StrCat(" (", absl::StrJoin(parts, "; "), ")");
}

// The reference to an operand in (B, H, T, D) (or (B, T, D)) layout: the value
// that exists, or a planned Transpose of its base.
std::string OperandRef(RewritePlan& plan, const HeadOperand& op, const std::string& key) {
  if (op.value != nullptr) return op.value->name();
  std::optional<SymbolicShape> shape;
  if (op.base->shape().has_value() && op.base->shape()->size() == op.perm.size() && pattern::IsPermutation(op.perm)) {
    shape = SymbolicShape();
    for (int64_t p : op.perm) shape->push_back((*op.base->shape())[p]);
  }
  std::string ref = plan.AddValue(key, op.base->name() + "/" + key, op.base->type(), shape);
  PlannedNode t{"Transpose", "", op.base->name() + "/" + key + "_transpose", {op.base->name()}, {ref}, {}};
  t.attributes.Set("perm", op.perm);
  plan.nodes.push_back(std::move(t));
  return ref;
}

struct MaskDecision {
  mha::MaskKind kind = mha::MaskKind::kNone;
  bool causal = false;  // the fused op's causal attribute (causal or window)
  int64_t window = 0;
  std::string attn_mask;  // value reference for an explicit mask
  /// What a row whose every key the mask hides gives in the subgraph (NaN:
  /// softmax of -inf scores; uniform: of equal finite fills); none when no
  /// row can be fully hidden.
  std::optional<mha::MaskedRows> masked_rows;
  std::optional<Reason> not_causal;
  /// The longest length the mask's constants (windows, offsets) reach: verify mode runs beyond it.
  int64_t longest_constant = 0;
  /// The graph input whose zeros pad keys, and which of its values the proof covers.
  std::string key_padding;
  mha::KeyPaddingValues key_padding_values = mha::KeyPaddingValues::kBinary;
  mha::KeyPaddingLength key_padding_length = mha::KeyPaddingLength::kKeys;
  /// With MaskedRows::kFills: the scores a row with no visible key gives its
  /// keys [hidden by the causal part only, by the padding only, by both], and
  /// which of them are added to the key's score rather than replace it.
  std::vector<float> hidden_fills;
  std::vector<int64_t> hidden_fills_add_scores;
  /// Whether a NaN or +inf score at a key [the causal or window part, the
  /// explicit mask or the padding] hides still reaches the softmax: an
  /// additive mask keeps it, Where replaces it (the fused op's hidden_nonfinite).
  std::array<bool, 2> hidden_nonfinite{true, true};
  /// 16-bit scores whose mask chain was read at every score
  /// (ProvenMaskChain::half): rows whose every key is hidden are computed in
  /// `score_type`, each key's masked score clamped at its floor [visible,
  /// causal, padding, both].
  bool half = false;
  ElementType score_type = ElementType::kFloat32;
  std::vector<float> score_floors;
  /// The graph inputs an explicit mask reads the values of (verify mode sizes
  /// them as padding: one entry per key).
  std::vector<std::string> inputs_read;
  /// A position bias added to the scores next to the masks (input 3 with
  /// position_bias = 1 or 2): the value it is.
  std::string bias;
  bool bias_into_mask = false;  // scores + (bias + mask) rather than (scores + bias) + mask
};

// What the 16-bit type gives every part, the clamps included: only the
// fills policy reproduces it.
void SetHalfRows(const ProvenMaskChain& proof, MaskDecision& d) {
  d.half = true;
  d.score_type = proof.score_type;
  const HalfMaskFunctions& f = proof.half_functions;
  d.score_floors.clear();
  for (int c = 0; c < kHalfKeyClasses; ++c)
    d.score_floors.push_back(f.seen[c] ? f.floor[c] : -std::numeric_limits<float>::infinity());
  d.masked_rows = mha::MaskedRows::kFills;
  d.hidden_fills.assign(proof.fills.begin(), proof.fills.end());
  d.hidden_fills_add_scores.clear();
  for (int part = 0; part < 3; ++part)
    d.hidden_fills_add_scores.push_back(proof.fill_seen[part] && proof.fill_adds_score[part] ? 1 : 0);
}

// The decision a proven mask chain gives.
MaskDecision FromChain(const ProvenMaskChain& proof) {
  MaskDecision d;
  d.longest_constant = proof.longest_constant;
  d.hidden_nonfinite = proof.keeps_nonfinite;
  const mha::MaskKind structural = proof.open          ? mha::MaskKind::kNone
                                   : proof.window > 0 ? mha::MaskKind::kWindow
                                                      : mha::MaskKind::kCausal;
  d.causal = !proof.open;
  d.window = proof.window;
  if (proof.key_padding == nullptr) {
    d.kind = structural;
    if (proof.half) SetHalfRows(proof, d);
    return d;
  }
  d.kind = mha::WithKeyPadding(structural);
  d.key_padding = proof.key_padding->name();
  d.key_padding_values = proof.nonzero_shows ? mha::KeyPaddingValues::kNonzero : mha::KeyPaddingValues::kBinary;
  d.key_padding_length = proof.padding_length;
  if (proof.hidden_rows) {
    // One value for every part a fully hidden row showed: the simpler
    // policies say the same (-inf everywhere: NaN; one finite fill: the mean of V).
    std::optional<float> only;
    bool one = true;
    bool adds = false;
    for (int part = 0; part < 3; ++part) {
      if (!proof.fill_seen[part]) continue;
      if (only && !(*only == proof.fills[part])) one = false;
      only = proof.fills[part];
      adds |= proof.fill_adds_score[part];
    }
    if (adds) one = false;  // such rows depend on the scores: only the fills policy reproduces them
    if (one && only && std::isinf(*only)) {
      d.masked_rows = mha::MaskedRows::kNaN;
    } else if (one && only) {
      d.masked_rows = mha::MaskedRows::kUniform;
    } else {
      d.masked_rows = mha::MaskedRows::kFills;
      d.hidden_fills.assign(proof.fills.begin(), proof.fills.end());
      if (adds)
        for (int part = 0; part < 3; ++part)
          d.hidden_fills_add_scores.push_back(proof.fill_seen[part] && proof.fill_adds_score[part] ? 1 : 0);
    }
  }
  if (proof.half) SetHalfRows(proof, d);
  return d;
}

// The 2-D graph inputs whose values (not only shapes) the mask reads: a padding mask's.
std::vector<std::string> InputsReadBy(const Graph& graph, const Value* mask) {
  auto cut = ShapeSubgraph::Cut(graph, mask, CutValues{{}, true});
  std::vector<std::string> names;
  if (cut.ok())
    for (const Value* v : cut->value_sources())
      if (RankOf(v) == 2) names.push_back(v->name());
  return names;
}

// What the softmax reads of the mask steps: the last step's output, or the
// view of it back to the scores' shape (kMaskView) when the match has one.
const Value* MaskedScores(const pattern::Match& m) {
  const Node* view = m.node(c::kMaskView);
  return view != nullptr ? view->output(0) : m.node(c::kMaskNode)->output(0);
}

// A view of the masked scores must give them the scores' own shape, and keep
// every dim but the keys', so that it only checks their count: then it is a
// relabelling the fused op needs not do, where it does not fail.
std::optional<Reason> CheckMaskView(const pattern::Match& m, const Node& scores, int rank) {
  const Node* view = m.node(c::kMaskView);
  if (view == nullptr) return std::nullopt;
  const Value* in = view->input(0);
  const Value* out = view->output(0);
  const Value* s = scores.output(0);
  if (RankOf(in) != rank || RankOf(out) != rank || RankOf(s) != rank)
    return Reason(absl::StrCat(view->Describe(), " views the masked scores to another rank"));
  for (int d = 0; d < rank; ++d) {
    const Dim& o = (*out->shape())[d];
    const bool kept = d + 1 == rank || (*in->shape())[d] == o;
    if (!kept || !(o == (*s->shape())[d]))
      return Reason(absl::StrCat(view->Describe(), " views the masked scores ", SymbolicShapeToString(*in->shape()),
                                 " as ", SymbolicShapeToString(*out->shape()), ", not as the scores' ",
                                 SymbolicShapeToString(*s->shape())));
  }
  return std::nullopt;
}

// Proves the mask steps between the matched scores and the softmax as one
// chain that may read a padding input.
absl::StatusOr<ProvenMaskChain> ProveChain(const Graph& graph, const pattern::Match& m, const Node& scores, int rank,
                                           const HeadOperand& k, const PassContext& ctx, MaskChainMemo* memo) {
  MaskChainRequest request;
  request.scores = m.value(c::kMaskChainIn);
  request.masked = MaskedScores(m);
  request.rank = rank;
  const Value* s = scores.output(0);
  request.dims.q_len = DimOf(s, -2);
  request.dims.kv_len = DimOf(s, -1);
  if (k.past != nullptr) request.dims.past_len = DimOf(k.past, 2);
  return ProveMaskChain(graph, request, *ctx.evaluator, ctx.exec_options, memo);
}

// The mask steps proven with a position bias taken out of them: the first
// candidate (bias_candidates.h) whose steps, with it held at zero, are a
// mask whose fills no bias below kPositionBiasLimit can reach. nullopt with
// the reasons in `why` otherwise.
std::optional<MaskDecision> ProveWithPositionBias(const Graph& graph, const pattern::Match& m, const Node& scores,
                                                  int rank, const HeadOperand& k, const PassContext& ctx,
                                                  MaskChainMemo* memo, Reason& why) {
  if (rank != 4 || ctx.evaluator == nullptr) return std::nullopt;
  const Value* scores_in = m.value(c::kMaskChainIn);
  const Value* masked = m.node(c::kMaskNode)->output(0);
  const Value* s = scores.output(0);
  for (const Value* bias : PositionBiasCandidates(scores_in, masked, s)) {
    auto note = [&](const std::string& reason) {
      absl::StrAppend(&why, "; not a position bias plus a mask with ", Quote(bias), " as the bias: ", reason);
    };
    const ElementType type = scores_in->type();
    if (bias->type() != type || (type != ElementType::kFloat32 && type != ElementType::kFloat16)) {
      note(absl::StrCat("it is ", ElementTypeName(bias->type()), ", the scores ", ElementTypeName(type)));
      continue;
    }
    const int bias_rank = RankOf(bias);
    if (bias_rank == 0 || bias_rank > 4) {
      note("its rank is unknown or above 4");
      continue;
    }
    if (auto bad = CheckMaskBroadcast(bias, s)) {
      note(*bad);
      continue;
    }
    const BiasEntry entry = BiasEntryOf(scores_in, masked, bias);
    if (entry == BiasEntry::kNone) {
      note("it is not added to the scores by the first mask step, nor into the mask that step adds");
      continue;
    }
    MaskChainRequest request;
    request.scores = scores_in;
    request.masked = MaskedScores(m);
    request.bias = bias;
    request.rank = rank;
    request.dims.q_len = DimOf(s, -2);
    request.dims.kv_len = DimOf(s, -1);
    if (k.past != nullptr) request.dims.past_len = DimOf(k.past, 2);
    auto proof = ProveMaskChain(graph, request, *ctx.evaluator, ctx.exec_options, memo);
    if (!proof.ok()) {
      note(std::string(proof.status().message()));
      continue;
    }
    // Nothing left to prove: the whole added tensor is what an explicit mask input takes.
    if (proof->open && proof->key_padding == nullptr) {
      note("nothing but the bias is left to hide keys");
      continue;
    }
    if (!proof->fills_absorb_bias) {
      note(absl::StrCat(proof->weak_fill, ", a fill a bias could reach (it must be -inf or at most -2^127)"));
      continue;
    }
    MaskDecision d = FromChain(*proof);
    d.bias = bias->name();
    d.attn_mask = bias->name();
    d.bias_into_mask = entry == BiasEntry::kIntoMask;
    // The score of every hidden key by the part that hides it: what a row
    // with no visible key averages over, and what the fused op computes a
    // row from when a bias entry is beyond its fast path's range.
    bool all_neg_inf = true;
    for (int part = 0; part < 3; ++part) all_neg_inf &= std::isinf(proof->part_fills[part]);
    d.masked_rows = all_neg_inf ? mha::MaskedRows::kNaN : mha::MaskedRows::kFills;
    if (!all_neg_inf) d.hidden_fills.assign(proof->part_fills.begin(), proof->part_fills.end());
    return d;
  }
  return std::nullopt;
}

std::variant<MaskDecision, Reason> DecideMask(const Graph& graph, const pattern::Match& m, const AttentionVariant& v,
                                              const HeadOperand& k, const Node& scores, int rank,
                                              const PassContext& ctx, RewritePlan& plan, MaskChainMemo* memo) {
  MaskDecision d;
  if (v.mask == MaskForm::kNone) return d;
  // A view back to the scores' shape is a step of the chain the proof evaluates.
  if (v.mask == MaskForm::kChain2 || v.mask == MaskForm::kChain3 || m.node(c::kMaskView) != nullptr) {
    if (ctx.evaluator == nullptr) return Reason("no subgraph evaluator to evaluate the mask with");
    auto chain = ProveChain(graph, m, scores, rank, k, ctx, memo);
    if (chain.ok()) return FromChain(*chain);
    Reason why(chain.status().message());
    if (auto biased = ProveWithPositionBias(graph, m, scores, rank, k, ctx, memo, why)) return *biased;
    return why;
  }
  // float16 scores overflow per key: where every key a row sees is -inf and
  // a hidden key is not, the subgraph weights the hidden keys by how s + fill
  // rounds in float16. Such a mask is proven as a chain, which reads the
  // float16 sums at every score, so that the fused op computes those rows as
  // the subgraph does (a padding mask is a chain anyway). A Where gives the
  // hidden keys its constant fill instead.
  if (v.mask == MaskForm::kAdd && scores.output(0)->type() == ElementType::kFloat16 &&
      InputsReadBy(graph, m.value(c::kMaskAdd)).empty()) {
    if (v.mask_before_scale)
      return Reason("an additive mask on float16 scores before the scale: where the scores a row sees overflow to "
                    "-inf, the subgraph weights the hidden keys by how scores + mask round in float16");
    if (ctx.evaluator == nullptr) return Reason("no subgraph evaluator to evaluate the mask with");
    auto chain = ProveChain(graph, m, scores, rank, k, ctx, memo);
    if (chain.ok()) return FromChain(*chain);
    return Reason(absl::StrCat(chain.status().message(), "; an additive mask on float16 scores is fused only as a "
                               "chain read at every float16 score"));
  }
  MaskProofRequest request;
  bool infinite_fill = false;
  // Where(mask, s, fill) replaces a hidden score; an added mask keeps it.
  d.hidden_nonfinite = {v.mask != MaskForm::kWhere, v.mask != MaskForm::kWhere};
  if (v.mask == MaskForm::kWhere) {
    const Value* fill = m.value(c::kMaskFill);
    const Tensor* t = pattern::ConstantOf(fill);
    if (t == nullptr) return Reason(absl::StrCat("mask fill ", Quote(fill), " is not a constant"));
    auto x = pattern::UniformValue(*t);
    if (!x) return Reason(absl::StrCat("mask fill ", Quote(fill), " is not one number"));
    if (!(*x <= kHidingFill)) return Reason(absl::StrCat("mask fill ", *x, " does not hide keys (not -inf or <= -1e4)"));
    infinite_fill = std::isinf(*x);
    const bool blocked_form = m.value(c::kMaskBlocked) != nullptr;
    request.mask = blocked_form ? m.value(c::kMaskBlocked) : m.value(c::kMaskKeep);
    request.reading = blocked_form ? MaskReading::kBlockedWhereTrue : MaskReading::kBlockedWhereFalse;
  } else {
    request.mask = m.value(c::kMaskAdd);
    request.reading = MaskReading::kAdditive;
  }
  const Value* s = scores.output(0);
  if (auto why = CheckMaskBroadcast(request.mask, s)) return *why;
  request.q_len = DimOf(s, -2);
  request.kv_len = DimOf(s, -1);
  if (k.past != nullptr) request.past_len = DimOf(k.past, 2);

  Reason why;
  if (ctx.evaluator == nullptr) {
    why = "no subgraph evaluator to evaluate the mask with";
  } else {
    auto proof = ProveCausalMask(graph, request, *ctx.evaluator, ctx.exec_options);
    if (proof.ok()) {
      d.longest_constant = proof->longest_constant;
      if (proof->open) return d;  // hides nothing: no mask at all
      d.kind = proof->window > 0 ? mha::MaskKind::kWindow : mha::MaskKind::kCausal;
      d.causal = true;
      d.window = proof->window;
      // No row is hidden by the structure alone, but a -inf Q or K entry can
      // make every score a row sees -inf: the row then averages what the
      // fill gives its hidden keys (equal finite fills), or is NaN (-inf).
      d.masked_rows = v.mask == MaskForm::kWhere && !infinite_fill ? mha::MaskedRows::kUniform : mha::MaskedRows::kNaN;
      return d;
    }
    why = std::string(proof.status().message());
    // A mask that reads an input's values (a padding mask): proven as a chain
    // with the scores, unless the scale comes after it (the fills would be scaled).
    d.inputs_read = InputsReadBy(graph, request.mask);
    if (!v.mask_before_scale && !d.inputs_read.empty()) {
      auto chain = ProveChain(graph, m, scores, rank, k, ctx, memo);
      if (chain.ok()) return FromChain(*chain);
      why = std::string(chain.status().message());
    }
  }

  // Scores plus a position bias plus a mask (T5 adds its mask into the bias).
  if (v.mask == MaskForm::kAdd && !v.mask_before_scale && ctx.evaluator != nullptr) {
    if (auto biased = ProveWithPositionBias(graph, m, scores, rank, k, ctx, memo, why)) return *biased;
  }

  // Not provably causal: an explicit attn_mask input, when that is exact.
  if (v.mask == MaskForm::kAdd && v.mask_before_scale)
    return Reason(absl::StrCat(why, "; an additive mask before the scale cannot be passed as attn_mask"));
  // The subgraph adds a 16-bit mask in that type: s + finfo(float16).min
  // rounds in steps of 32 (s - 1e4 in bfloat16 in steps of 64), so a row whose
  // every key the mask hides weights its keys by how their scores round,
  // where the fused op, adding in float32, gives softmax(s + m).
  const ElementType scores_type = scores.output(0)->type();
  if (v.mask == MaskForm::kAdd && (scores_type == ElementType::kFloat16 || scores_type == ElementType::kBFloat16))
    return Reason(absl::StrCat(why, "; an additive ", ElementTypeName(scores_type),
                               " mask cannot be passed as attn_mask: the subgraph rounds scores + mask to ",
                               ElementTypeName(scores_type), ", which the fused op does not"));
  const int mask_rank = RankOf(request.mask);
  if (mask_rank == 0 || mask_rank > 4) return Reason(absl::StrCat(why, "; the mask's rank is unknown or above 4"));
  std::string ref = request.mask->name();
  if (request.reading == MaskReading::kBlockedWhereTrue) {
    std::string keep = plan.AddValue("attn_mask_keep", request.mask->name() + "/keep", ElementType::kBool,
                                     request.mask->shape());
    plan.nodes.push_back({"Not", "", request.mask->name() + "/not", {ref}, {keep}, {}});
    ref = keep;
  }
  // (B, T, Tk) scores: the fused op aligns the mask with (B, H, T, Tk), so give it the head axis.
  if (rank == 3 && mask_rank == 3) {
    std::optional<SymbolicShape> shape = request.mask->shape();
    shape->insert(shape->begin() + 1, Dim::Known(1));
    std::string out = plan.AddValue("attn_mask_4d", request.mask->name() + "/4d",
                                    request.reading == MaskReading::kAdditive ? request.mask->type() : ElementType::kBool,
                                    shape);
    PlannedNode un{"Unsqueeze", "", request.mask->name() + "/unsqueeze", {ref}, {out}, {}};
    if (graph.OpsetFor("") >= 13) {
      plan.values.push_back({"attn_mask_axes", request.mask->name() + "/axes", ElementType::kInt64, std::nullopt,
                             *Tensor::FromVector<int64_t>({1}, {1})});
      un.inputs.push_back("$attn_mask_axes");
    } else {
      un.attributes.Set("axes", std::vector<int64_t>{1});
    }
    plan.nodes.push_back(std::move(un));
    ref = out;
  }
  d.kind = mha::MaskKind::kExplicit;
  d.attn_mask = ref;
  // A row whose every key the mask hides: Where with a finite fill gives
  // equal scores there (uniform weights), a -inf fill or an additive -inf
  // mask gives softmax of -inf, NaN. An additive finite mask is added as it
  // is, so its rows never count as hidden.
  d.masked_rows = v.mask == MaskForm::kWhere && !infinite_fill ? mha::MaskedRows::kUniform : mha::MaskedRows::kNaN;
  d.not_causal = why;
  return d;
}

}  // namespace

std::variant<AttentionRewrite, std::string> CheckAttention(const Graph& graph, const pattern::Match& m,
                                                           const AttentionVariant& variant,
                                                           const PassContext& context, MaskChainMemo* memo) {
  const Node* softmax = m.node(c::kSoftmax);
  const Node* scores = m.node(c::kScores);
  const Node* pv = m.node(c::kOutputMatMul);
  const Value* q = m.value(c::kQ);

  int rank = RankOf(scores->output(0));
  if (rank == 0) rank = RankOf(q);
  if (rank == 0) return Reason("the rank of the scores is unknown");
  if (rank != 3 && rank != 4)
    return Reason(absl::StrCat("scores have rank ", rank, ", expected 3 (one head) or 4 (batch, heads, queries, keys)"));
  const int softmax_rank = RankOf(softmax->input(0));
  if (softmax_rank != 0 && softmax_rank != rank)
    return Reason(absl::StrCat("the mask turns rank-", rank, " scores into rank ", softmax_rank));
  if (auto why = CheckSoftmaxAxis(graph, *softmax, rank)) return *why;
  if (auto why = CheckMatMulBroadcast(*scores, rank, "Q", "K^T")) return *why;
  if (auto why = CheckMatMulBroadcast(*pv, rank, "the probabilities", "V")) return *why;
  if (auto why = CheckMaskView(m, *scores, rank)) return *why;
  if (auto why = pattern::CheckInternalUses(m, pv)) return *why;

  auto scale_or = ScaleFactor(m, {c::kScale, c::kQScale, c::kKScale});
  if (auto* why = std::get_if<Reason>(&scale_or)) return *why;
  double scale = std::get<double>(scale_or);
  std::optional<double> softcap;
  if (variant.softcap) {
    const double a = *m.number(c::kSoftcapDiv), b = *m.number(c::kSoftcapMul);
    if (a != b || !(a > 0) || !std::isfinite(a))
      return Reason(absl::StrCat("softcap divisor ", a, " and multiplier ", b, " are not one positive number"));
    softcap = a;
  }

  // K as the score MatMul reads it: a scale on K of a higher rank could broadcast it.
  const Value* k_read = m.value(c::kKt) != nullptr ? m.value(c::kKt) : m.value(c::kKtBase);
  for (const Value* operand : {q, k_read, m.value(c::kV)}) {
    const int r = RankOf(operand);
    if (r != 0 && r != rank) return Reason(absl::StrCat("operand ", Quote(operand), " has rank ", r, ", scores ", rank));
  }
  Operands ops;
  std::vector<std::string> notes;
  auto resolve = [&](bool allow_repeat, bool allow_past) -> std::optional<Reason> {
    auto resolved = ResolveOperands(m, rank, allow_repeat, allow_past);
    if (auto* why = std::get_if<Reason>(&resolved)) return *why;
    ops = std::get<Operands>(std::move(resolved));
    ops.notes = notes;
    return std::nullopt;
  };
  if (auto why = resolve(true, true)) return *why;
  if ((ops.k.past == nullptr) != (ops.v.past == nullptr)) {
    notes.push_back(absl::StrCat(ops.k.past != nullptr ? "K" : "V", " reads a KV cache and ",
                                 ops.k.past != nullptr ? "V" : "K", " does not, so neither is read through one"));
    if (auto why = resolve(true, false)) return *why;
  }
  if (ops.k.groups != ops.v.groups) {
    notes.push_back(absl::StrCat("K and V repeat their heads differently (", ops.k.groups, " and ", ops.v.groups,
                                 " times), so neither is read through its repeat"));
    if (auto why = resolve(false, ops.k.past != nullptr)) return *why;
  }
  const ElementType type = q->type();
  // The fused kernels accumulate in float32; fusing a float64 graph would silently lose precision.
  if (type == ElementType::kFloat64) return Reason("Q is float64 and the fused attention kernels compute in float32");
  if (auto why = CheckCasts(m, type)) return *why;
  // float16 scores overflow to +-inf where |Q·K| (times the factors applied
  // before and at the MatMul's output) reaches 65520; the fused op computes
  // them in float32, so it is told where the subgraph's scores become
  // infinite (score_limit) and gives what the subgraph gives there.
  std::optional<double> score_limit;
  if (type == ElementType::kFloat16) {
    auto before = ScaleFactor(m, {c::kQScale, c::kKScale});
    auto after = ScaleFactor(m, {c::kScale});
    if (auto* why = std::get_if<Reason>(&before)) return *why;
    if (auto* why = std::get_if<Reason>(&after)) return *why;
    const double pre = std::fabs(std::get<double>(before)), post = std::fabs(std::get<double>(after));
    // A factor above 1 makes where the scores overflow depend on where a
    // Cast sits between the steps (and on Q·c overflowing by itself).
    if (pre > 1.0 || post > 1.0)
      return Reason(absl::StrCat("float16 scores scaled by a factor above 1 (", pre * post,
                                 "): where they overflow is not modelled"));
    score_limit = kFloat16Overflow / pre;
  }
  for (const auto& [name, op] : {NamedOperand{"K", &ops.k}, NamedOperand{"V", &ops.v}}) {
    const Value* val = op->value != nullptr ? op->value : op->base;
    if (type != ElementType::kUndefined && val->type() != ElementType::kUndefined && val->type() != type)
      return Reason(absl::StrCat("Q is ", ElementTypeName(type), " but ", Quote(val), " is ",
                                 ElementTypeName(val->type()), WalkNotes(ops, {{name, op}})));
  }
  const Value* out4 = pv->output(0);
  if (type != ElementType::kUndefined && out4->type() != ElementType::kUndefined && out4->type() != type)
    return Reason(absl::StrCat("the output is ", ElementTypeName(out4->type()), " but Q is ", ElementTypeName(type)));
  if (rank == 4 && ops.q.heads > 0 && ops.k.heads > 0) {
    if (ops.q.heads % ops.k.heads != 0)
      return Reason(absl::StrCat(ops.q.heads, " query heads are not a multiple of ", ops.k.heads, " key heads",
                                 WalkNotes(ops, {{"Q", &ops.q}, {"K", &ops.k}})));
    if (ops.v.heads > 0 && ops.v.heads != ops.k.heads)
      return Reason(absl::StrCat("K has ", ops.k.heads, " heads but V has ", ops.v.heads,
                                 WalkNotes(ops, {{"K", &ops.k}, {"V", &ops.v}})));
  }

  AttentionRewrite rw;
  auto mask_or = DecideMask(graph, m, variant, ops.k, *scores, rank, context, rw.plan, memo);
  if (auto* why = std::get_if<Reason>(&mask_or)) return *why;
  MaskDecision& mask = std::get<MaskDecision>(mask_or);
  // Without a mask no row is hidden, but overflowing float16 scores can make
  // every score of a row -inf: the subgraph's softmax of that row is NaN.
  if (variant.mask == MaskForm::kNone && score_limit) mask.masked_rows = mha::MaskedRows::kNaN;
  // Where(IsNaN(p), 0, p) after the softmax: rows the subgraph makes NaN give zero weights.
  const bool nan_guard = m.value(c::kNanGuarded) != nullptr;
  if (nan_guard && mask.masked_rows == mha::MaskedRows::kNaN) mask.masked_rows = mha::MaskedRows::kZeros;

  // float16 rows whose every key is hidden are computed from Q·K as the score
  // MatMul reads them, then the one scale step the scores take.
  std::optional<double> score_divisor;
  if (mask.half) {
    const char* type_name = ElementTypeName(mask.score_type);
    if (softcap) return Reason(absl::StrCat("a softcap on ", type_name, " scores with an added mask is not modelled"));
    for (const char* f : {"q_scale_div", "q_scale_mul", "k_scale_div", "k_scale_mul"})
      if (m.value(f) != nullptr)
        return Reason(absl::StrCat(type_name, " scores with an added mask and a factor on Q or K before their MatMul (",
                                   Quote(m.value(f)), "): rows whose every key is hidden are computed from Q·K as "
                                   "the MatMul reads them"));
    if (const Value* d = m.value("scale_div")) score_divisor = pattern::UniformValue(*pattern::ConstantOf(d)).value_or(1.0);
  }

  // Layout: straight from the projections when every split and the merge are plain.
  std::optional<HeadMerge> merge;
  if (rank == 4) {
    // Without the merge the fused op writes (B, H, T, Dv) and the merge stays: a layout, not a rejection.
    absl::StatusOr<HeadMerge> found = FindHeadMerge(out4, ops.q.heads, ops.v.head_dim);
    if (found.ok()) merge = *std::move(found);
  }
  const bool three_d = rank == 3 || (ops.q.projection && ops.k.projection && ops.v.projection && merge);
  std::string q_ref, k_ref, v_ref;
  const Value* replaced = out4;
  if (rank == 4 && three_d) {
    q_ref = ops.q.projection->name();
    // Not with a mask before the scale, whose fills the fused op's scale would reach.
    // (Not where float16 rows are computed from the scaled Q the MatMul reads.)
    auto pre = variant.mask_before_scale || mask.half ? std::nullopt : FindPreSplitScale(ops.q.projection);
    if (pre && std::isfinite(scale * pre->factor) && scale * pre->factor != 0.0) {
      q_ref = pre->input->name();
      scale *= pre->factor;
    }
    k_ref = ops.k.projection->name();
    v_ref = ops.v.projection->name();
    replaced = merge->merged;
  } else {
    q_ref = OperandRef(rw.plan, ops.q, "q");
    k_ref = OperandRef(rw.plan, ops.k, "k");
    v_ref = OperandRef(rw.plan, ops.v, "v");
  }
  const int64_t heads = rank == 3 ? 1 : ops.q.heads;
  const int64_t kv_heads = rank == 3 ? 1 : ops.k.heads;

  PlannedNode fused{mha::kOpType, mha::kDomain, absl::StrCat(softmax->name(), "/", mha::kOpType), {}, {}, {}};
  if (heads > 0) fused.attributes.Set(mha::kNumHeads, heads);
  if (kv_heads > 0) fused.attributes.Set(mha::kKvNumHeads, kv_heads);
  fused.attributes.Set(mha::kScale, static_cast<float>(scale));
  if (mask.causal) fused.attributes.Set(mha::kCausal, int64_t{1});
  if (mask.window > 0) fused.attributes.Set(mha::kWindow, mask.window);
  if (mask.masked_rows) fused.attributes.Set(mha::kMaskedRows, std::string(mha::ToString(*mask.masked_rows)));
  if (!mask.hidden_fills.empty()) fused.attributes.Set(mha::kHiddenFills, mask.hidden_fills);
  if (!mask.hidden_fills_add_scores.empty())
    fused.attributes.Set(mha::kHiddenFillsAddScores, mask.hidden_fills_add_scores);
  if (!mask.key_padding.empty())
    fused.attributes.Set(mha::kKeyPadding, std::string(mha::ToString(mask.key_padding_values)));
  // A padding input broadcast into the scores and then viewed back to their
  // keys: the view takes any length where the scores are empty.
  if (mask.key_padding_length == mha::KeyPaddingLength::kBroadcast && m.node(c::kMaskView) != nullptr)
    mask.key_padding_length = mha::KeyPaddingLength::kBroadcastViewed;
  if (!mask.key_padding.empty() && mask.key_padding_length != mha::KeyPaddingLength::kKeys)
    fused.attributes.Set(mha::kKeyPaddingLength, std::string(mha::ToString(mask.key_padding_length)));
  if (!mask.hidden_nonfinite[0] || !mask.hidden_nonfinite[1])
    fused.attributes.Set(mha::kHiddenNonFinite,
                         std::vector<int64_t>{mask.hidden_nonfinite[0], mask.hidden_nonfinite[1]});
  if (nan_guard) fused.attributes.Set(mha::kNanGuard, int64_t{1});
  if (score_limit) fused.attributes.Set(mha::kScoreLimit, static_cast<float>(*score_limit));
  if (mask.half) {
    fused.attributes.Set(mha::kScoreRounding, std::string(ElementTypeName(mask.score_type)));
    if (score_divisor) fused.attributes.Set(mha::kScoreDivisor, static_cast<float>(*score_divisor));
    fused.attributes.Set(mha::kScoreFloors, mask.score_floors);
  }
  if (!mask.bias.empty())
    fused.attributes.Set(mha::kPositionBias, mask.bias_into_mask ? mha::kBiasIntoMask : mha::kBiasOnScores);
  if (softcap) fused.attributes.Set(mha::kSoftcap, static_cast<float>(*softcap));
  const bool has_past = ops.k.past != nullptr;
  fused.inputs.assign(mha::kNumInputs, "");
  fused.inputs[mha::kInputQ] = q_ref;
  fused.inputs[mha::kInputK] = k_ref;
  fused.inputs[mha::kInputV] = v_ref;
  fused.inputs[mha::kInputMask] = mask.attn_mask;
  if (has_past) {
    fused.inputs[mha::kInputPastKey] = ops.k.past->name();
    fused.inputs[mha::kInputPastValue] = ops.v.past->name();
  }
  fused.inputs[mha::kInputKeyPadding] = mask.key_padding;
  while (!fused.inputs.empty() && fused.inputs.back().empty()) fused.inputs.pop_back();
  rw.output_type = replaced->type();
  fused.outputs.push_back(rw.plan.AddValue("y", replaced->name() + "/fused", replaced->type(), replaced->shape()));
  rw.plan.replace.emplace_back(replaced->name(), "$y");
  if (has_past) {
    fused.outputs.push_back(rw.plan.AddValue("present_key", ops.k.present->name() + "/fused", ops.k.present->type(),
                                             ops.k.present->shape()));
    fused.outputs.push_back(rw.plan.AddValue("present_value", ops.v.present->name() + "/fused",
                                             ops.v.present->type(), ops.v.present->shape()));
    rw.plan.replace.emplace_back(ops.k.present->name(), "$present_key");
    rw.plan.replace.emplace_back(ops.v.present->name(), "$present_value");
  }
  rw.plan.nodes.push_back(std::move(fused));

  FusionRecord& r = rw.record;
  r.op = mha::kOpType;
  r.pattern = variant.Name();
  r.num_heads = heads;
  r.kv_num_heads = kv_heads;
  r.head_dim = ops.q.head_dim;
  r.scale = static_cast<float>(scale);
  r.causal = mask.causal;
  r.window = mask.window;
  r.mask = mask.bias.empty() ? std::string(mha::ToString(mask.kind)) : mha::ToStringWithBias(mask.kind);
  r.bias = mask.bias;
  r.masked_rows = mask.masked_rows ? mha::ToString(*mask.masked_rows) : "";
  r.key_padding = mask.key_padding;
  r.q_layout = three_d ? "BTC" : "BHTD";
  r.has_past = has_past;
  rw.not_causal_reason = mask.not_causal;
  if (!mask.key_padding.empty()) rw.verify_padding_inputs.push_back(mask.key_padding);
  if (mask.kind == mha::MaskKind::kExplicit)
    for (const std::string& in : mask.inputs_read) rw.verify_padding_inputs.push_back(in);
  // Beyond the largest constant; else (a buffer that long stops the unfused
  // graph) the whole buffer less verify's past; else beyond the window.
  if (mask.longest_constant > 0) {
    rw.verify_lengths = {mask.longest_constant + 3, mask.longest_constant - 4};
    if (mask.window > 0) rw.verify_lengths.push_back(mask.window + 3);
  }
  return rw;
}

}  // namespace attune::attention
