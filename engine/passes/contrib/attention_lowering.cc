// com.microsoft.Attention (BERT's and GPT-2's fused attention, as ONNX
// Runtime's transformer optimizer writes it) lowered onto MatMul + Add for the
// packed projection, one Split, and attune.MultiHeadAttention (the flash
// kernels: causal block skipping, key padding skipping its blocks).
//
// Contract (ContribOperators.md, contrib_ops/cpu/bert/attention.cc, attention_cpu_base.h):
//   inputs  input [B,S,Hin], weights [Hin, Dq+Dk+Dv], bias? [Dq+Dk+Dv], mask_index? int32,
//           past? [2,B,N,P,H], attention_bias? [B|1,N|1,S,T], past_sequence_length?
//   outputs output [B,S,Dv], present? [2,B,N,P+S,H]
//   scores  scale·Q·Kᵀ + attention_bias + mask, mask = mask_filter_value on a
//           padded key, lowest() on a key after past + s (unidirectional).
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/schema/multi_head_attention.h"
#include "engine/passes/contrib/lowerings.h"
#include "engine/passes/contrib/ms_attention_kit.h"

namespace attune::contrib {
namespace {

enum AttentionInput { kInput, kWeights, kBias, kMaskIndex, kPast, kAttentionBias, kPastSequenceLength };

struct AttentionAttributes {
  int64_t heads = 0, unidirectional = 0;
  float scale = 0.0f, fill = -10000.0f;
  std::vector<int64_t> sizes;  // Dq, Dk, Dv (empty: three equal thirds of the weights)
};

absl::StatusOr<AttentionAttributes> ReadAttributes(const Lowering& l) {
  RETURN_IF_ERROR(CheckKnownAttributes(l, {"num_heads", "unidirectional", "qkv_hidden_sizes", "mask_filter_value",
                                           "scale", "do_rotary", "rotary_embedding_dim", "past_present_share_buffer"}));
  AttentionAttributes a;
  ASSIGN_OR_RETURN(a.heads, HeadsAttr(l));
  ASSIGN_OR_RETURN(a.unidirectional, IntAttr(l, "unidirectional", 0));
  ASSIGN_OR_RETURN(a.scale, FloatAttr(l, "scale", 0.0f));
  ASSIGN_OR_RETURN(a.fill, FloatAttr(l, "mask_filter_value", -10000.0f));
  ASSIGN_OR_RETURN(const int64_t rotary, IntAttr(l, "do_rotary", 0));
  ASSIGN_OR_RETURN(const int64_t share, IntAttr(l, "past_present_share_buffer", 0));
  if (rotary != 0) return l.Unsupported("do_rotary = 1 is not supported (ONNX Runtime's CPU kernel has no rotary either)");
  if (share != 0)
    return l.Unsupported("past_present_share_buffer = 1 is not supported; give past and present as growing tensors");
  if (a.unidirectional != 0 && a.unidirectional != 1)
    return l.Invalid(absl::StrCat("unidirectional must be 0 or 1, got ", a.unidirectional));
  if (l.node()->attributes().Has("qkv_hidden_sizes")) {
    auto sizes = l.node()->attributes().GetInts("qkv_hidden_sizes");
    if (!sizes.ok()) return l.Invalid(absl::StrCat("attribute qkv_hidden_sizes: ", sizes.status().message()));
    a.sizes = *sizes;
    if (a.sizes.size() != 3) return l.Invalid("qkv_hidden_sizes must hold 3 sizes (Q, K, V)");
    if (a.sizes[0] != a.sizes[1])
      return l.Invalid(absl::StrCat("qkv_hidden_sizes: Q (", a.sizes[0], ") and K (", a.sizes[1], ") must be equal"));
  }
  return a;
}

// Dq, Dk, Dv from the attribute or the weights, each a multiple of num_heads.
absl::StatusOr<std::vector<int64_t>> HiddenSizes(const Lowering& l, const AttentionAttributes& a) {
  const Value* w = l.input(kWeights);
  if (Rank(w) >= 0 && Rank(w) != 2)
    return l.Invalid(absl::StrCat("weights '", w->name(), "' must be 2-D [input_hidden, Q + K + V], its rank is ", Rank(w)));
  const int64_t width = StaticDim(w, 1), in_hidden = StaticDim(w, 0), x_hidden = StaticDim(l.input(kInput), 2);
  if (in_hidden > 0 && x_hidden > 0 && in_hidden != x_hidden)
    return l.Invalid(absl::StrCat("weights '", w->name(), "' have ", in_hidden, " rows, input '",
                                  l.input(kInput)->name(), "' has ", x_hidden, " columns"));
  std::vector<int64_t> sizes = a.sizes;
  if (sizes.empty()) {
    if (width <= 0) return l.Unsupported(absl::StrCat("weights '", w->name(), "' need a known last dim"));
    if (width % 3 != 0)
      return l.Invalid(absl::StrCat("weights '", w->name(), "' have ", width, " columns, not 3 equal parts"));
    sizes = {width / 3, width / 3, width / 3};
  } else if (width > 0 && width != sizes[0] + sizes[1] + sizes[2]) {
    return l.Invalid(absl::StrCat("weights '", w->name(), "' have ", width, " columns, qkv_hidden_sizes sum to ",
                                  sizes[0] + sizes[1] + sizes[2]));
  }
  for (int64_t s : sizes)
    if (s <= 0 || s % a.heads != 0)
      return l.Invalid(absl::StrCat("hidden size ", s, " is not a positive multiple of num_heads ", a.heads));
  const int64_t bias_width = StaticDim(l.input(kBias), 0);
  if (l.input(kBias) != nullptr && bias_width > 0 && bias_width != sizes[0] + sizes[1] + sizes[2])
    return l.Invalid(absl::StrCat("bias '", l.input(kBias)->name(), "' has ", bias_width, " entries, the weights ",
                                  sizes[0] + sizes[1] + sizes[2], " columns"));
  return sizes;
}

// past [2, B, N, P, H]: its key and value halves, checked against the heads.
absl::StatusOr<std::pair<Value*, Value*>> PastHalves(Lowering& l, const AttentionAttributes& a,
                                                     const std::vector<int64_t>& sizes) {
  Value* past = l.input(kPast);
  if (past == nullptr) return std::pair<Value*, Value*>{nullptr, nullptr};
  const std::string where = absl::StrCat("past '", past->name(), "'");
  if (Rank(past) >= 0 && Rank(past) != 5)
    return l.Invalid(absl::StrCat(where, " must be 5-D [2, batch, num_heads, past, head], its rank is ", Rank(past)));
  if (sizes[0] != sizes[2])
    return l.Invalid(absl::StrCat(where, " needs Q, K and V of one hidden size, qkv_hidden_sizes differ"));
  const int64_t head = sizes[0] / a.heads;
  if ((StaticDim(past, 0) >= 0 && StaticDim(past, 0) != 2) ||
      (StaticDim(past, 2) >= 0 && StaticDim(past, 2) != a.heads) ||
      (StaticDim(past, 4) >= 0 && StaticDim(past, 4) != head))
    return l.Invalid(absl::StrCat(where, " must be [2, batch, ", a.heads, ", past, ", head, "]: it disagrees with ",
                                  "num_heads and the head size"));
  Attributes g;
  g.Set("axis", int64_t{0});
  Value* key = l.Add("Gather", {past, l.Constant("past_key_index", Tensor::Scalar<int64_t>(0))}, g, past->type());
  Value* value = l.Add("Gather", {past, l.Constant("past_value_index", Tensor::Scalar<int64_t>(1))}, g, past->type());
  return std::pair<Value*, Value*>{key, value};
}

}  // namespace

absl::Status LowerMsAttention(Lowering& l, PassContext& context) {
  RETURN_IF_ERROR(CheckArity(l, 2, 7, 2));
  ASSIGN_OR_RETURN(const AttentionAttributes a, ReadAttributes(l));
  // past_sequence_length is read only with past_present_share_buffer (refused above).
  const int x_rank = Rank(l.input(kInput));
  if (x_rank >= 0 && x_rank != 3)
    return l.Invalid(absl::StrCat("input '", l.input(kInput)->name(), "' must be 3-D [batch, sequence, hidden]"));
  ASSIGN_OR_RETURN(const std::vector<int64_t> sizes, HiddenSizes(l, a));
  if (l.wanted_output(1) != nullptr && l.input(kPast) == nullptr && sizes[0] != sizes[2])
    return l.Invalid("output present needs Q, K and V of one hidden size, qkv_hidden_sizes differ");
  ASSIGN_OR_RETURN(const auto past, PastHalves(l, a, sizes));
  const ElementType type = l.input(kInput)->type();
  Value* qkv = l.Add("MatMul", {l.input(kInput), l.input(kWeights)}, {}, type);
  if (l.input(kBias) != nullptr) qkv = l.Add("Add", {qkv, l.input(kBias)}, {}, type);
  std::vector<Value*> parts = SplitInto(l, qkv, 2, sizes);
  ASSIGN_OR_RETURN(const FusedMask mask, LowerMasks(l, "mask_index", l.input(kMaskIndex), l.input(kAttentionBias),
                                                    l.input(kInput), nullptr, past.first, a.fill));
  std::vector<Value*> in = {parts[0], parts[1], parts[2], mask.explicit_mask, past.first, past.second,
                            mask.key_padding};
  std::vector<Value*> outs = l.AddMulti(mha::kOpType, in, 3, FusedAttributes(a.heads, a.scale, a.unidirectional, mask, a.fill),
                                        type, mha::kDomain);
  l.Forward(0, outs[0]);
  if (l.wanted_output(1) != nullptr) {
    Attributes c;
    c.Set("axis", int64_t{0});
    l.Forward(1, l.Add("Concat", {Unsqueezed(l, outs[1], 0), Unsqueezed(l, outs[2], 0)}, std::move(c), type));
  }
  return l.Finish(context, mha::kOpType,
                  absl::StrCat("num_heads=", a.heads, a.unidirectional ? " causal" : "", " mask=", mask.kind,
                               l.input(kAttentionBias) != nullptr ? " +attention_bias" : "",
                               l.input(kPast) != nullptr ? " past" : "", a.sizes.empty() ? "" : " qkv_hidden_sizes"));
}

}  // namespace attune::contrib
