// com.microsoft.MultiHeadAttention (what ONNX Runtime's optimizer writes for
// T5, Whisper, SAM and the decoders of encoder-decoder models) lowered onto
// attune.MultiHeadAttention: the packed forms unpacked by one Split, the bias
// added to each part, cross-attention K/V read in their [B, N, L, H] layout,
// and the cache appended in place into present_key / present_value.
//
// Contract (ContribOperators.md, contrib_ops/cpu/bert/multihead_attention.cc,
// multihead_attention_helper.h):
//   inputs  query [B,S,D] (or packed QKV [B,S,N,3,H] with key and value absent),
//           key? [B,L,D] (or packed KV [B,L,N,2,H] with value absent, or
//           [B,N,L,H] for cross-attention), value? [B,L,Dv] or [B,N,L,Hv],
//           bias? [D+D+Dv], key_padding_mask? int32, attention_bias? [B|1,N|1,S,T],
//           past_key?, past_value? [B,N,P,H], past_sequence_length?, cache_indirection?
//   outputs output [B,S,Dv], present_key?, present_value? [B,N,P+L,H]
//   scores  as Attention's (attention_lowering.cc): scale·Q·Kᵀ + attention_bias + mask.
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/schema/multi_head_attention.h"
#include "engine/passes/contrib/lowerings.h"
#include "engine/passes/contrib/ms_attention_kit.h"

namespace attune::contrib {
namespace {

enum MhaInput { kQuery, kKey, kValue, kBias, kKeyPaddingMask, kAttentionBias, kPastKey, kPastValue,
                kPastSequenceLength, kCacheIndirection };

struct MhaForm {
  Value *q = nullptr, *k = nullptr, *v = nullptr;  // as the fused op reads them
  bool cross = false;                              // K and V given [B, N, L, H]: Q and Y go through that layout
  const char* name = "separate";
};

// The bias [D + D + Dv] split into its Q, K, V parts.
absl::StatusOr<std::vector<Value*>> BiasParts(Lowering& l, int64_t d) {
  Value* bias = l.input(kBias);
  const int64_t width = StaticDim(bias, 0);
  if (Rank(bias) != 1 || d <= 0 || width <= 2 * d)
    return l.Unsupported(absl::StrCat("bias '", bias->name(), "' needs a known 1-D shape wider than 2 × the ",
                                      "query's known hidden size"));
  return SplitInto(l, bias, 0, {d, d, width - 2 * d});
}

// One part of a packed [B, S, N, parts, H] tensor as [B, S, N·H].
std::vector<Value*> Unpacked(Lowering& l, Value* packed, int parts) {
  std::vector<Value*> out = SplitInto(l, packed, 3, std::vector<int64_t>(parts, 1));
  for (Value*& p : out) p = Reshaped(l, p, {0, 0, -1});
  return out;
}

absl::Status CheckPacked(const Lowering& l, const Value* v, int64_t heads, int64_t parts) {
  if (Rank(v) != 5) return absl::OkStatus();
  if ((StaticDim(v, 2) >= 0 && StaticDim(v, 2) != heads) || (StaticDim(v, 3) >= 0 && StaticDim(v, 3) != parts))
    return l.Invalid(absl::StrCat("packed input '", v->name(), "' must be [batch, sequence, num_heads = ", heads, ", ",
                                  parts, ", head]"));
  return absl::OkStatus();
}

absl::StatusOr<MhaForm> Form(Lowering& l, int64_t heads) {
  Value *query = l.input(kQuery), *key = l.input(kKey), *value = l.input(kValue), *bias = l.input(kBias);
  const int qr = Rank(query), kr = Rank(key), vr = Rank(value);
  if (qr < 0 || (key != nullptr && kr < 0) || (value != nullptr && vr < 0))
    return absl::UnavailableError(absl::StrCat(l.Where(), ": the ranks of query, key and value are not known"));
  MhaForm f;
  if (key == nullptr) {
    if (value != nullptr || qr != 5)
      return l.Invalid(absl::StrCat("without key, query '", query->name(), "' must be packed QKV [batch, sequence, ",
                                    "num_heads, 3, head] and value absent"));
    RETURN_IF_ERROR(CheckPacked(l, query, heads, 3));
    std::vector<Value*> qkv = Unpacked(l, query, 3);
    f.q = qkv[0], f.k = qkv[1], f.v = qkv[2], f.name = "packed_qkv";
    if (bias != nullptr) {
      const int64_t h = StaticDim(query, 4);
      ASSIGN_OR_RETURN(std::vector<Value*> b, BiasParts(l, h > 0 ? h * heads : -1));
      for (int i = 0; i < 3; ++i) (i == 0 ? f.q : i == 1 ? f.k : f.v) = l.Add("Add", {qkv[i], b[i]}, {}, query->type());
    }
    return f;
  }
  if (qr != 3) return l.Invalid(absl::StrCat("query '", query->name(), "' must be 3-D [batch, sequence, hidden] with a key"));
  f.q = query;
  if (kr == 5) {
    if (value != nullptr) return l.Invalid("with packed KV (a 5-D key) value must be absent");
    if (bias != nullptr) return l.Invalid("bias is not allowed with packed KV (a 5-D key)");
    RETURN_IF_ERROR(CheckPacked(l, key, heads, 2));
    std::vector<Value*> kv = Unpacked(l, key, 2);
    f.k = kv[0], f.v = kv[1], f.name = "packed_kv";
    return f;
  }
  if (value == nullptr || (kr != 3 && kr != 4) || vr != kr)
    return l.Invalid(absl::StrCat("key '", key->name(), "' and value must both be 3-D [batch, kv_sequence, hidden] ",
                                  "or both 4-D [batch, num_heads, kv_sequence, head]"));
  f.k = key, f.v = value;
  if (kr == 4) {
    if (bias != nullptr) return l.Unsupported("bias with a 4-D key and value (cross-attention) is not supported");
    if (StaticDim(key, 1) >= 0 && StaticDim(key, 1) != heads)
      return l.Invalid(absl::StrCat("key '", key->name(), "' has ", StaticDim(key, 1), " heads, num_heads is ", heads));
    f.cross = true, f.name = "cross";
    const int64_t h = StaticDim(key, 3);
    f.q = Transposed(l, Reshaped(l, query, {0, 0, heads, h > 0 ? h : -1}), {0, 2, 1, 3});
    return f;
  }
  if (bias != nullptr) {
    ASSIGN_OR_RETURN(std::vector<Value*> b, BiasParts(l, StaticDim(query, 2)));
    f.q = l.Add("Add", {query, b[0]}, {}, query->type());
    f.k = l.Add("Add", {key, b[1]}, {}, key->type());
    f.v = l.Add("Add", {value, b[2]}, {}, value->type());
  }
  return f;
}

absl::Status CheckPast(const Lowering& l, int64_t heads, bool cross) {
  Value *pk = l.input(kPastKey), *pv = l.input(kPastValue);
  if ((pk == nullptr) != (pv == nullptr)) return l.Invalid("past_key and past_value must be given together");
  if (pk == nullptr) return absl::OkStatus();
  if (cross) return l.Invalid("past_key and past_value must be absent when key and value are 4-D (cross-attention)");
  for (const Value* p : {pk, pv}) {
    if (Rank(p) >= 0 && Rank(p) != 4)
      return l.Invalid(absl::StrCat("past '", p->name(), "' must be 4-D [batch, num_heads, past, head]"));
    if (StaticDim(p, 1) >= 0 && StaticDim(p, 1) != heads)
      return l.Invalid(absl::StrCat("past '", p->name(), "' has ", StaticDim(p, 1), " heads, num_heads is ", heads));
  }
  if (StaticDim(pk, 2) >= 0 && StaticDim(pv, 2) >= 0 && StaticDim(pk, 2) != StaticDim(pv, 2))
    return l.Invalid(absl::StrCat("past_key '", pk->name(), "' holds ", StaticDim(pk, 2), " positions, past_value '",
                                  pv->name(), "' ", StaticDim(pv, 2)));
  return absl::OkStatus();
}

// ONNX Runtime's causal part hides keys after past + s; the fused op's is
// aligned bottom-right, the same when the new keys are as many as the queries
// (or there is one query: ONNX Runtime then hides nothing, nor does the op).
absl::Status CheckCausalAlignment(const Lowering& l, const MhaForm& f) {
  const Value* query = l.input(kQuery);
  const Value* key = l.input(kKey);
  if (key == nullptr || StaticDim(query, 1) == 1) return absl::OkStatus();
  const int axis = Rank(key) == 4 ? 2 : 1;
  const auto& qs = query->shape();
  const auto& ks = key->shape();
  if (qs && ks && (*qs)[1] == (*ks)[axis]) return absl::OkStatus();
  return l.Unsupported(absl::StrCat("unidirectional with key '", key->name(), "' whose length is not shown to be ",
                                    "the query's (", f.name, ")"));
}

}  // namespace

absl::Status LowerMsMultiHeadAttention(Lowering& l, PassContext& context) {
  RETURN_IF_ERROR(CheckArity(l, 1, 10, 3));
  RETURN_IF_ERROR(CheckKnownAttributes(l, {"num_heads", "mask_filter_value", "scale", "unidirectional"}));
  ASSIGN_OR_RETURN(const int64_t heads, HeadsAttr(l));
  ASSIGN_OR_RETURN(const int64_t unidirectional, IntAttr(l, "unidirectional", 0));
  ASSIGN_OR_RETURN(const float scale, FloatAttr(l, "scale", 0.0f));
  ASSIGN_OR_RETURN(const float fill, FloatAttr(l, "mask_filter_value", -10000.0f));
  if (unidirectional != 0 && unidirectional != 1)
    return l.Invalid(absl::StrCat("unidirectional must be 0 or 1, got ", unidirectional));
  for (int i : {kPastSequenceLength, kCacheIndirection})
    if (l.input(i) != nullptr)
      return l.Unsupported(absl::StrCat("input ", i == kPastSequenceLength ? "past_sequence_length" : "cache_indirection",
                                        " ('", l.input(i)->name(), "') is not supported (a shared cache buffer, beam search)"));
  const int64_t q_hidden = Rank(l.input(kQuery)) == 3 ? StaticDim(l.input(kQuery), 2) : -1;
  if (q_hidden > 0 && q_hidden % heads != 0)
    return l.Invalid(absl::StrCat("query '", l.input(kQuery)->name(), "' has ", q_hidden,
                                  " columns, not a multiple of num_heads ", heads));
  ASSIGN_OR_RETURN(const MhaForm f, Form(l, heads));
  RETURN_IF_ERROR(CheckPast(l, heads, f.cross));
  if (unidirectional) RETURN_IF_ERROR(CheckCausalAlignment(l, f));
  ASSIGN_OR_RETURN(const FusedMask mask, LowerMasks(l, "key_padding_mask", l.input(kKeyPaddingMask),
                                                    l.input(kAttentionBias), l.input(kQuery), l.input(kKey),
                                                    l.input(kPastKey), fill));
  const ElementType type = l.input(kQuery)->type();
  std::vector<Value*> in = {f.q, f.k, f.v, mask.explicit_mask, l.input(kPastKey), l.input(kPastValue),
                            mask.key_padding};
  std::vector<Value*> outs = l.AddMulti(mha::kOpType, in, 3, FusedAttributes(heads, scale, unidirectional, mask, fill),
                                        type, mha::kDomain);
  Value* y = outs[0];
  if (f.cross) y = Reshaped(l, Transposed(l, y, {0, 2, 1, 3}), {0, 0, -1});
  for (int i = 0; i < 3; ++i) l.Forward(i, i == 0 ? y : outs[i]);
  return l.Finish(context, mha::kOpType,
                  absl::StrCat("num_heads=", heads, " ", f.name, unidirectional ? " causal" : "", " mask=", mask.kind,
                               l.input(kAttentionBias) != nullptr ? " +attention_bias" : "",
                               l.input(kPastKey) != nullptr ? " past" : ""));
}

}  // namespace attune::contrib
