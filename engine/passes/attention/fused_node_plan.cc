// Stage 5 of the attention rule (attention_stages.h): the plan of the fused
// node. It reads Q, K and V straight from their projections (B, T, H·D) when
// every head split and the head merge are plain, else in (B, H, T, D) through
// planned Transposes; a one-number scale on Q's projection becomes part of its
// scale; it replaces the merged output (or P·V) and the presents.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/schema/multi_head_attention.h"
#include "engine/passes/attention/attention_stages.h"
#include "engine/pattern/constants.h"
#include "engine/pattern/predicates.h"

namespace attune::attention {
namespace {

namespace c = captures;

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

}  // namespace

AttentionRewrite PlanFusedNode(const pattern::Match& m, const AttentionVariant& variant, int rank,
                               const Operands& ops, ScaleDecision scale, MaskDecision mask, RewritePlan plan,
                               const SinkDecision& sinks, const WeightsDecision& weights) {
  const Node* softmax = m.node(c::kSoftmax);
  const Value* out4 = m.node(c::kOutputMatMul)->output(0);
  AttentionRewrite rw;
  rw.plan = std::move(plan);
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
    if (pre && std::isfinite(scale.scale * pre->factor) && scale.scale * pre->factor != 0.0) {
      q_ref = pre->input->name();
      scale.scale *= pre->factor;
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
  fused.attributes.Set(mha::kScale, static_cast<float>(scale.scale));
  if (mask.causal) fused.attributes.Set(mha::kCausal, int64_t{1});
  if (mask.window > 0) fused.attributes.Set(mha::kWindow, mask.window);
  if (mask.max_kv_len > 0) fused.attributes.Set(mha::kMaxKvLen, mask.max_kv_len);
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
  if (mask.nan_guard) fused.attributes.Set(mha::kNanGuard, int64_t{1});
  if (scale.score_limit) fused.attributes.Set(mha::kScoreLimit, static_cast<float>(*scale.score_limit));
  if (mask.half) {
    fused.attributes.Set(mha::kScoreRounding, std::string(ElementTypeName(mask.score_type)));
    if (scale.score_divisor) fused.attributes.Set(mha::kScoreDivisor, static_cast<float>(*scale.score_divisor));
    fused.attributes.Set(mha::kScoreFloors, mask.score_floors);
  }
  if (!mask.bias.empty())
    fused.attributes.Set(mha::kPositionBias, mask.bias_into_mask ? mha::kBiasIntoMask : mha::kBiasOnScores);
  if (scale.softcap) fused.attributes.Set(mha::kSoftcap, static_cast<float>(*scale.softcap));
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
  if (const Value* padding = mask.key_padding_true_pads) {
    // PyTorch's key_padding_mask pads where true; the fused op shows where it is.
    std::string shows =
        rw.plan.AddValue("key_padding_shows", mask.key_padding + "/shows", ElementType::kBool, padding->shape());
    rw.plan.nodes.push_back({"Not", "", mask.key_padding + "/not", {mask.key_padding}, {shows}, {}});
    fused.inputs[mha::kInputKeyPadding] = shows;
  }
  if (!sinks.logits.empty()) {
    const int64_t n = static_cast<int64_t>(sinks.logits.size());
    rw.plan.values.push_back({"sinks", sinks.source + "/per_head", ElementType::kFloat32,
                              SymbolicShape{Dim::Known(n)}, *Tensor::FromVector<float>({n}, sinks.logits)});
    fused.inputs[mha::kInputSinks] = "$sinks";
  }
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
  if (const Value* p = weights.probabilities) {
    // Every reader of the Softmax but P·V (which the fused op replaces) reads output 3.
    fused.outputs.resize(mha::kOutputProbabilities, "");
    fused.outputs.push_back(rw.plan.AddValue("probabilities", p->name() + "/fused", p->type(), p->shape()));
    for (const Value* read : weights.read_outside) rw.plan.replace.emplace_back(read->name(), "$probabilities");
  }
  rw.plan.nodes.push_back(std::move(fused));

  FusionRecord& r = rw.record;
  r.op = mha::kOpType;
  r.pattern = variant.Name();
  r.num_heads = heads;
  r.kv_num_heads = kv_heads;
  r.head_dim = ops.q.head_dim;
  r.scale = static_cast<float>(scale.scale);
  r.causal = mask.causal;
  r.window = mask.window;
  r.mask = mask.bias.empty() ? std::string(mha::ToString(mask.kind)) : mha::ToStringWithBias(mask.kind);
  r.bias = mask.bias;
  r.masked_rows = mask.masked_rows ? mha::ToString(*mask.masked_rows) : "";
  r.key_padding = mask.key_padding;
  r.sinks = sinks.source;
  if (weights.probabilities != nullptr) r.weights = weights.probabilities->name();
  r.max_kv_len = mask.max_kv_len;
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
  // Not beyond the mask's buffer, where neither graph runs.
  if (mask.max_kv_len > 0)
    for (int64_t& length : rw.verify_lengths) length = std::min(length, mask.max_kv_len);
  return rw;
}

}  // namespace attune::attention
