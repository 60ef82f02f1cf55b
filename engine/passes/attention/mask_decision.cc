// Stage 4 of the attention rule (attention_stages.h): how the fused op masks
// keys. A mask chain (Where/Add/Sub/Max steps, a padding input) is proven by
// evaluating it (mask_chain_proof.h); a single mask step by the causal mask
// proof (mask_proof.h); a position bias is taken out of the steps first
// (bias_candidates.h); what is provably none of these becomes an explicit
// mask input where that is exact.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/schema/multi_head_attention.h"
#include "engine/passes/attention/attention_stages.h"
#include "engine/passes/attention/bias_candidates.h"
#include "engine/passes/attention/broadcast_check.h"
#include "engine/passes/attention/mask_chain_proof.h"
#include "engine/passes/attention/mask_proof.h"
#include "engine/pattern/constants.h"
#include "engine/rewrite/shape_subgraph.h"

namespace attune::attention {
namespace {

namespace c = captures;

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
  if (proof.padding_true_pads) d.key_padding_true_pads = proof.key_padding;
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
      d.uniform_fill = *only;
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

}  // namespace

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
      d.max_kv_len = proof->max_kv_len;
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

std::optional<Reason> FinishMask(const pattern::Match& m, const AttentionVariant& variant, ScaleDecision& scale,
                                 MaskDecision& mask) {
  // Without a mask no row is hidden, but overflowing float16 scores can make
  // every score of a row -inf: the subgraph's softmax of that row is NaN.
  if (variant.mask == MaskForm::kNone && scale.score_limit) mask.masked_rows = mha::MaskedRows::kNaN;
  // Where(IsNaN(p), 0, p) after the softmax: rows the subgraph makes NaN give zero weights.
  mask.nan_guard = m.value(c::kNanGuarded) != nullptr;
  if (mask.nan_guard && mask.masked_rows == mha::MaskedRows::kNaN) mask.masked_rows = mha::MaskedRows::kZeros;

  // float16 rows whose every key is hidden are computed from Q·K as the score
  // MatMul reads them, then the one scale step the scores take.
  if (mask.half) {
    const char* type_name = ElementTypeName(mask.score_type);
    if (scale.softcap) return Reason(absl::StrCat("a softcap on ", type_name, " scores with an added mask is not modelled"));
    for (const char* f : {"q_scale_div", "q_scale_mul", "k_scale_div", "k_scale_mul"})
      if (m.value(f) != nullptr)
        return Reason(absl::StrCat(type_name, " scores with an added mask and a factor on Q or K before their MatMul (",
                                   Quote(m.value(f)), "): rows whose every key is hidden are computed from Q·K as "
                                   "the MatMul reads them"));
    for (const char* f : {"inner_scale_div", "inner_scale_mul"})
      if (m.value(f) != nullptr)
        return Reason(absl::StrCat(type_name, " scores with an added mask and two factors on the scores (",
                                   Quote(m.value(f)), "): rows whose every key is hidden are computed with one"));
    if (const Value* d = m.value("scale_div")) scale.score_divisor = pattern::UniformValue(*pattern::ConstantOf(d)).value_or(1.0);
  }
  return std::nullopt;
}

}  // namespace attune::attention
