// com.microsoft.GroupQueryAttention lowered onto attune.MultiHeadAttention
// (the flash kernels: causal and window block skipping, GQA without repeated
// heads, the cache appended in place), with the rotary embedding as
// com.microsoft.RotaryEmbedding at the positions attune.GroupQueryPositions
// reads from seqlens_k, which also checks that the lowering is the contract
// (ops/contrib/gqa_positions.cc says when).
//
// Contract (ContribOperators.md, contrib_ops/cpu/bert/gqa_attention_base.h):
//   inputs  query [B,S,H·D] (or packed QKV [B,S,(H+2·Hkv)·D] with key and value
//           absent), key?, value? [B,S,Hkv·D], past_key?, past_value? [B,Hkv,P,D],
//           seqlens_k int32 [B], total_sequence_length int32, cos_cache?, sin_cache?
//           [max, rotary/2], position_ids?, attention_bias?, head_sink? [H] (the fused op's
//           sinks; smooth_softmax = 1 without it: sinks of logit 0)
//   outputs output [B,S,H·D], present_key?, present_value? [B,Hkv,P+S,D]
//   causal bottom-right (query s of sequence b sees keys up to past_b + s);
//   local_window_size W > 0: W keys (itself and the W - 1 before it, as ONNX
//   Runtime 1.30 computes it; older sources read W + 1); softcap after
//   the scale; scale 0 means 1/sqrt(D).
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/schema/multi_head_attention.h"
#include "engine/passes/contrib/lowerings.h"

namespace attune::contrib {
namespace {

enum GqaInput { kQuery, kKey, kValue, kPastKey, kPastValue, kSeqlensK, kTotalLength, kCos, kSin, kPositionIds,
                kAttentionBias, kHeadSink };

struct GqaAttributes {
  int64_t heads = 0, kv_heads = 0, window = -1, do_rotary = 0, interleaved = 0, smooth_softmax = 0;
  float scale = 0.0f, softcap = 0.0f;
};

absl::StatusOr<GqaAttributes> ReadGqaAttributes(const Lowering& l) {
  RETURN_IF_ERROR(CheckKnownAttributes(l, {"num_heads", "kv_num_heads", "scale", "softcap", "local_window_size",
                                           "do_rotary", "rotary_interleaved", "smooth_softmax", "qk_output"}));
  GqaAttributes a;
  ASSIGN_OR_RETURN(a.heads, IntAttr(l, "num_heads", 0));
  ASSIGN_OR_RETURN(a.kv_heads, IntAttr(l, "kv_num_heads", 0));
  ASSIGN_OR_RETURN(a.window, IntAttr(l, "local_window_size", -1));
  ASSIGN_OR_RETURN(a.do_rotary, IntAttr(l, "do_rotary", 0));
  ASSIGN_OR_RETURN(a.interleaved, IntAttr(l, "rotary_interleaved", 0));
  ASSIGN_OR_RETURN(a.smooth_softmax, IntAttr(l, "smooth_softmax", 0));
  ASSIGN_OR_RETURN(a.scale, FloatAttr(l, "scale", 0.0f));
  ASSIGN_OR_RETURN(a.softcap, FloatAttr(l, "softcap", 0.0f));
  ASSIGN_OR_RETURN(int64_t qk_output, IntAttr(l, "qk_output", 0));
  if (a.heads <= 0 || a.kv_heads <= 0)
    return l.Invalid(absl::StrCat("num_heads (", a.heads, ") and kv_num_heads (", a.kv_heads, ") must be > 0"));
  if (a.heads % a.kv_heads != 0)
    return l.Invalid(absl::StrCat("num_heads ", a.heads, " is not a multiple of kv_num_heads ", a.kv_heads));
  if (qk_output != 0) return l.Unsupported("qk_output is not supported");
  if (!(a.softcap >= 0.0f)) return l.Invalid(absl::StrCat("softcap must be >= 0, got ", a.softcap));
  return a;
}

// Q, K, V of a packed [B, S, (H + 2·Hkv)·D] query: Split on the last axis.
absl::StatusOr<std::vector<Value*>> Unpacked(Lowering& l, const GqaAttributes& a) {
  Value* packed = l.input(kQuery);
  const int64_t width = StaticDim(packed, 2);
  const int64_t parts = a.heads + 2 * a.kv_heads;
  if (width <= 0) return l.Unsupported(absl::StrCat("packed QKV '", packed->name(), "' needs a known last dim"));
  if (width % parts != 0)
    return l.Invalid(absl::StrCat("packed QKV '", packed->name(), "' has ", width, " columns, not a multiple of ",
                                  "num_heads + 2·kv_num_heads = ", parts));
  const int64_t d = width / parts;
  const std::vector<int64_t> sizes = {a.heads * d, a.kv_heads * d, a.kv_heads * d};
  Attributes attrs;
  attrs.Set("axis", int64_t{2});
  std::vector<Value*> in = {packed};
  if (l.graph().OpsetFor("") >= 13) {
    in.push_back(l.Int64s("split", sizes));
  } else {
    attrs.Set("split", sizes);
  }
  return l.AddMulti("Split", in, 3, std::move(attrs), packed->type());
}

Value* Rotated(Lowering& l, Value* x, Value* positions, int64_t heads, const GqaAttributes& a) {
  Attributes r;
  r.Set("num_heads", heads);
  r.Set("interleaved", a.interleaved);
  const int64_t half = StaticDim(l.input(kCos), 1);
  if (half > 0) r.Set("rotary_embedding_dim", 2 * half);
  return l.Add("RotaryEmbedding", {x, positions, l.input(kCos), l.input(kSin)}, std::move(r), x->type(), kMsDomain);
}

}  // namespace

absl::Status LowerGroupQueryAttention(Lowering& l, PassContext& context) {
  RETURN_IF_ERROR(CheckArity(l, 1, 12, 4));
  ASSIGN_OR_RETURN(const GqaAttributes a, ReadGqaAttributes(l));
  if (l.input(kSeqlensK) == nullptr || l.input(kTotalLength) == nullptr)
    return l.Invalid("inputs seqlens_k and total_sequence_length are required");
  for (int i : {kPositionIds, kAttentionBias})
    if (l.input(i) != nullptr)
      return l.Unsupported(absl::StrCat("input ", i == kPositionIds ? "position_ids" : "attention_bias", " ('",
                                        l.input(i)->name(), "') is not supported yet"));
  if (l.wanted_output(3) != nullptr) return l.Unsupported("output 3 (output_qk) is not supported");
  if ((l.input(kKey) == nullptr) != (l.input(kValue) == nullptr))
    return l.Invalid("key and value must be given together (or neither, for a packed query)");
  if ((l.input(kPastKey) == nullptr) != (l.input(kPastValue) == nullptr))
    return l.Invalid("past_key and past_value must be given together");
  if (a.do_rotary && (l.input(kCos) == nullptr || l.input(kSin) == nullptr))
    return l.Invalid("do_rotary = 1 needs cos_cache and sin_cache");
  for (int i : {kPastKey, kPastValue})
    if (l.input(i) != nullptr && Rank(l.input(i)) >= 0 && Rank(l.input(i)) != 4)
      return l.Invalid(absl::StrCat("input '", l.input(i)->name(), "' must be 4-D [batch, kv_heads, past, head]"));
  const int64_t past_heads = StaticDim(l.input(kPastKey), 1);
  if (past_heads > 0 && past_heads != a.kv_heads)
    return l.Invalid(absl::StrCat("past_key '", l.input(kPastKey)->name(), "' has ", past_heads,
                                  " heads, kv_num_heads is ", a.kv_heads));
  const int64_t q_width = StaticDim(l.input(kQuery), 2);
  if (l.input(kKey) != nullptr && q_width > 0 && q_width % a.heads != 0)
    return l.Invalid(absl::StrCat("query '", l.input(kQuery)->name(), "' has ", q_width,
                                  " columns, not a multiple of num_heads ", a.heads));
  Value *q = l.input(kQuery), *k = l.input(kKey), *v = l.input(kValue);
  const bool packed = k == nullptr;
  if (packed) {
    ASSIGN_OR_RETURN(std::vector<Value*> qkv, Unpacked(l, a));
    q = qkv[0], k = qkv[1], v = qkv[2];
  }
  std::vector<Value*> guard_in = {q, l.input(kSeqlensK), l.input(kTotalLength)};
  // Its shape only: a cache read by no other op is appended in place.
  if (l.input(kPastKey) != nullptr) guard_in.push_back(l.Add("Shape", {l.input(kPastKey)}, {}, ElementType::kInt64));
  std::vector<Value*> guarded = l.AddMulti("GroupQueryPositions", guard_in, 2, {}, ElementType::kUndefined, "attune");
  q = guarded[0];
  if (a.do_rotary) {
    q = Rotated(l, q, guarded[1], a.heads, a);
    k = Rotated(l, k, guarded[1], a.kv_heads, a);
  }
  Attributes m;
  m.Set(mha::kNumHeads, a.heads);
  m.Set(mha::kKvNumHeads, a.kv_heads);
  m.Set(mha::kCausal, int64_t{1});
  if (a.scale != 0.0f) m.Set(mha::kScale, a.scale);
  if (a.softcap > 0.0f) m.Set(mha::kSoftcap, a.softcap);
  if (a.window > 0) m.Set(mha::kWindow, a.window);
  std::vector<Value*> in = {q, k, v, nullptr};
  if (l.input(kPastKey) != nullptr) in.push_back(l.input(kPastKey)), in.push_back(l.input(kPastValue));
  // head_sink [num_heads]: a logit per head in the softmax's denominator, the
  // fused op's sinks; smooth_softmax without it is a sink of logit 0.
  Value* sinks = l.input(kHeadSink);
  if (sinks == nullptr && a.smooth_softmax != 0)
    sinks = l.graph().AddConstant(l.graph().UniqueName(l.input(kQuery)->name() + "/smooth_softmax_sinks"),
                                  *Tensor::FromVector<float>({a.heads}, std::vector<float>(a.heads, 0.0f)));
  if (sinks != nullptr) {
    in.resize(mha::kInputSinks + 1, nullptr);
    in[mha::kInputSinks] = sinks;
  }
  std::vector<Value*> outs = l.AddMulti(mha::kOpType, in, 3, std::move(m), l.input(kQuery)->type(), mha::kDomain);
  for (int i = 0; i < 3; ++i) l.Forward(i, outs[i]);
  return l.Finish(context, mha::kOpType,
                  absl::StrCat("num_heads=", a.heads, " kv_num_heads=", a.kv_heads, " causal",
                               a.window > 0 ? absl::StrCat(" window=", a.window) : "",
                               a.softcap > 0 ? absl::StrCat(" softcap=", a.softcap) : "",
                               l.input(kHeadSink) != nullptr ? " head_sink"
                               : a.smooth_softmax != 0       ? " smooth_softmax"
                                                             : "",
                               a.do_rotary ? (a.interleaved ? " rotary=interleaved" : " rotary=halves") : "",
                               packed ? " packed_qkv" : ""));
}

}  // namespace attune::contrib
