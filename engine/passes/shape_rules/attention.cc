// Shape rule of the fused attune.MultiHeadAttention op (inputs Q, K, V, mask,
// past K, past V, key padding, sinks; outputs Y, present K, present V, probabilities).
#include "core/schema/multi_head_attention.h"
#include "engine/passes/shape_rules/rules.h"
#include "engine/passes/symbolic_dim.h"

namespace attune::shape_rules {
namespace {

// Per-head size of a 3-D [B, T, heads * D] or 4-D [B, heads, T, D] tensor.
Dim HeadDim(const SymbolicShape& s, int64_t heads) {
  if (s.size() == 4) return s[3];
  if (s.size() == 3 && heads > 0) return DimDivExact(s[2], Dim::Known(heads));
  return Dim();
}

Dim SeqLen(const SymbolicShape& s) { return s.size() == 4 ? s[2] : s.size() == 3 ? s[1] : Dim(); }

absl::Status MultiHeadAttentionRule(ShapeContext& ctx) {
  auto heads_attr = ctx.attrs().GetInt(mha::kNumHeads, 0);
  if (!heads_attr.ok()) return heads_attr.status();
  const int64_t heads = *heads_attr;
  auto kv_heads_attr = ctx.attrs().GetInt(mha::kKvNumHeads, heads);
  if (!kv_heads_attr.ok()) return kv_heads_attr.status();
  const int64_t kv_heads = *kv_heads_attr > 0 ? *kv_heads_attr : heads;
  for (int o = 0; o < ctx.num_outputs(); ++o) ctx.output(o).type = ctx.input(mha::kInputQ).type;

  const auto& q = ctx.input(mha::kInputQ).shape;
  const auto& k = ctx.input(mha::kInputK).shape;
  const auto& v = ctx.input(mha::kInputV).shape;
  const Dim v_head_dim = v ? HeadDim(*v, kv_heads) : Dim();
  if (q && q->size() == 3) {
    SymbolicShape y = *q;
    y[2] = DimMul(Dim::Known(heads), v_head_dim);
    ctx.output(mha::kOutputY).shape = y;
  } else if (q && q->size() == 4) {
    SymbolicShape y = *q;
    y[3] = v_head_dim;
    ctx.output(mha::kOutputY).shape = y;
  }
  // present = concat(past, new) along the sequence, laid out [B, kv_heads, P + S, D].
  for (int which = 0; which < 2; ++which) {
    const int out = which == 0 ? mha::kOutputPresentKey : mha::kOutputPresentValue;
    const int past_input = which == 0 ? mha::kInputPastKey : mha::kInputPastValue;
    if (out >= ctx.num_outputs()) break;
    const auto& fresh = which == 0 ? k : v;
    if (!fresh || (fresh->size() != 3 && fresh->size() != 4)) continue;
    Dim length = SeqLen(*fresh);
    const auto& past = ctx.input(past_input).shape;
    if (ctx.has_input(past_input)) length = past && past->size() == 4 ? DimAdd((*past)[2], length) : Dim();
    ctx.output(out).shape = SymbolicShape{(*fresh)[0], Dim::Known(kv_heads), length, HeadDim(*fresh, kv_heads)};
  }
  // The probabilities: [B, heads, T, P + S].
  if (mha::kOutputProbabilities < ctx.num_outputs() && q && k && (q->size() == 3 || q->size() == 4) &&
      k->size() == q->size()) {
    Dim keys = SeqLen(*k);
    const auto& past = ctx.input(mha::kInputPastKey).shape;
    if (ctx.has_input(mha::kInputPastKey)) keys = past && past->size() == 4 ? DimAdd((*past)[2], keys) : Dim();
    const Dim h = q->size() == 4 ? (*q)[1] : heads > 0 ? Dim::Known(heads) : Dim();
    ctx.output(mha::kOutputProbabilities).shape = SymbolicShape{(*q)[0], h, SeqLen(*q), keys};
  }
  return absl::OkStatus();
}

// attune.GroupQueryPositions (query, seqlens_k, total_sequence_length, past_key?)
// -> (query, positions int64 [batch, sequence]).
absl::Status GroupQueryPositionsRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  ctx.output(0).shape = ctx.input(0).shape;
  if (ctx.num_outputs() > 1) {
    ctx.output(1).type = ElementType::kInt64;
    const auto& q = ctx.input(0).shape;
    if (q && q->size() == 3) ctx.output(1).shape = SymbolicShape{(*q)[0], (*q)[1]};
  }
  return absl::OkStatus();
}

// attune.AttentionMaskIndex (mask, query, key?, past_key's shape?) -> bool
// [batch, keys] (additive = 0) or float [batch, 1, sequence, keys] (additive = 1).
absl::Status AttentionMaskIndexRule(ShapeContext& ctx) {
  auto additive = ctx.attrs().GetInt("additive", 0);
  if (!additive.ok()) return additive.status();
  ctx.output(0).type = *additive == 1 ? ElementType::kFloat32 : ElementType::kBool;
  const auto& q = ctx.input(1).shape;
  if (q && q->size() >= 2)
    ctx.output(0).shape = *additive == 1 ? SymbolicShape{(*q)[0], Dim::Known(1), (*q)[1], Dim()}
                                         : SymbolicShape{(*q)[0], Dim()};
  return absl::OkStatus();
}

}  // namespace

void AddAttentionRules(RuleTable& table) {
  table.Add(mha::kOpType, MultiHeadAttentionRule, mha::kDomain);
  table.Add("GroupQueryPositions", GroupQueryPositionsRule, "attune");
  table.Add("AttentionMaskIndex", AttentionMaskIndexRule, "attune");
}

}  // namespace attune::shape_rules
