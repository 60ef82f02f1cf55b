#include "ops/attention/attention_kernel.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/attention/attention_bias.h"
#include "ops/attention/attention_materialized.h"
#include "ops/attention/attention_operands.h"
#include "ops/attention/attention_shapes.h"
#include "ops/attention/float_staging.h"
#include "ops/attention/key_padding.h"
#include "ops/attention/nonfinite.h"
#include "ops/attention/position_bias.h"
#include "ops/attention/kernels/attention_args.h"

namespace attune::attention {
namespace {

// nonpad_kv_seqlen: int64 [batch], each count in [0, total_kv_len].
absl::StatusOr<const int64_t*> CheckNonpadKvSeqlen(const AttentionParams& p, const AttentionShapes& s,
                                                   const Tensor& t) {
  if (t.type() != ElementType::kInt64 || t.rank() != 1 || t.shape()[0] != s.batch) {
    return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": nonpad_kv_seqlen must be int64 of shape [", s.batch,
                                                   "] (got ", t.DebugString(), ")"));
  }
  const int64_t* counts = t.data<int64_t>();
  for (int64_t b = 0; b < s.batch; ++b) {
    if (counts[b] < 0 || counts[b] > s.total_kv_len) {
      return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": nonpad_kv_seqlen[", b, "] = ", counts[b],
                                                     " is outside [0, ", s.total_kv_len, "]"));
    }
  }
  return counts;
}

// The causal offset of each batch (one entry when every batch shares it).
std::vector<int64_t> CausalOffsets(const AttentionParams& p, const AttentionShapes& s, const int64_t* nonpad) {
  if (p.alignment == CausalAlignment::kBottomRight) return {s.total_kv_len - s.q_len};
  if (s.has_past) return {s.past_len};
  // Without a cache ONNX aligns top-left (offset 0), unless nonpad_kv_seqlen
  // says where each batch's keys end: then that end is the bottom-right corner.
  if (nonpad == nullptr || !p.causal) return {0};
  std::vector<int64_t> offsets(static_cast<size_t>(s.batch));
  for (int64_t b = 0; b < s.batch; ++b) offsets[b] = nonpad[b] - s.q_len;
  return offsets;
}

void AdvanceBatch(StridedView& view, int64_t b) {
  if (view.data != nullptr) view.data += b * view.stride_batch;
}

// The arguments of batch `b` alone.
AttentionArgs BatchSlice(const AttentionArgs& a, int64_t b) {
  AttentionArgs one = a;
  one.batch = 1;
  AdvanceBatch(one.q, b);
  AdvanceBatch(one.k, b);
  AdvanceBatch(one.v, b);
  AdvanceBatch(one.bias, b);
  AdvanceBatch(one.scores_bias, b);
  if (one.y != nullptr) one.y += b * a.y_stride_batch;
  if (one.kv_valid_len != nullptr) one.kv_valid_len += b;
  if (one.key_visible != nullptr) one.key_visible += b * a.kv_len;
  return one;
}

void SetOutputStrides(const AttentionShapes& s, AttentionArgs& a) {
  if (s.three_d) {  // (B, Tq, Hq·Dv)
    a.y_stride_batch = s.q_len * s.q_heads * s.v_head_dim;
    a.y_stride_head = s.v_head_dim;
    a.y_stride_seq = s.q_heads * s.v_head_dim;
  } else {  // (B, Hq, Tq, Dv)
    a.y_stride_batch = s.q_heads * s.q_len * s.v_head_dim;
    a.y_stride_head = s.q_len * s.v_head_dim;
    a.y_stride_seq = s.v_head_dim;
  }
}

// The sinks input (MultiHeadAttention's input 7): one float logit per query
// head, [num_heads], staged as float32. A sink with every key hidden is what
// "uniform" rows would need the fill for, which the op does not have.
absl::StatusOr<Tensor> CheckSinks(const KernelContext& ctx, const AttentionParams& p, const AttentionShapes& s,
                                  const Tensor& t) {
  if (!IsStageableFloat(t.type()) || t.rank() != 1 || t.shape()[0] != s.q_heads)
    return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": input 7 (sinks) must be a float tensor of shape [",
                                                   s.q_heads, "], one logit per query head (got ", t.DebugString(),
                                                   ")"));
  if (p.masked_rows == MaskedRows::kUniform)
    return absl::InvalidArgumentError(absl::StrCat(
        p.op_name, ": sinks with masked_rows \"uniform\": a row whose every key is hidden needs the fill's value"));
  if (p.position_bias)
    return absl::UnimplementedError(absl::StrCat(p.op_name, ": sinks together with a position bias"));
  return StageAsFloat32(ctx, t);
}

// MultiHeadAttention's probabilities (output 3) come from the row-by-row
// path, which computes the scores, the masks and the softmax as the subgraph
// does; the policies it does not model are refused rather than approximated.
absl::Status CheckProbabilitiesOutput(const AttentionParams& p) {
  const char* what = p.position_bias                      ? "a position bias (position_bias)"
                     : p.hidden_fills.half()              ? "16-bit scores (score_rounding)"
                     : p.nan_rows_zeroed                  ? "a NaN guard (nan_guard)"
                     : !p.hidden_nonfinite.structural ||
                               !p.hidden_nonfinite.bias ? "masks that replace hidden scores (hidden_nonfinite)"
                                                        : nullptr;
  if (what == nullptr) return absl::OkStatus();
  return absl::UnimplementedError(
      absl::StrCat(p.op_name, ": output 3 (the probabilities) is not computed together with ", what));
}

// A float32 tensor to compute into: the output itself when it is float32.
absl::StatusOr<Tensor> FloatTarget(const KernelContext& ctx, const Tensor& output) {
  if (output.type() == ElementType::kFloat32) return output;
  return ctx.AllocateScratch(ElementType::kFloat32, output.shape());
}

}  // namespace

absl::Status AttentionKernel::Run(KernelContext& ctx) const {
  const AttentionParams& p = params_;
  const Tensor* q = ctx.input(kInputQ);
  const Tensor* k = ctx.input(kInputK);
  const Tensor* v = ctx.input(kInputV);
  if (q == nullptr || k == nullptr || v == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": inputs Q, K and V are required"));
  }
  const Tensor* mask = ctx.input(kInputMask);
  const Tensor* past_key = ctx.input(kInputPastKey);
  const Tensor* past_value = ctx.input(kInputPastValue);
  // Input 6 is ONNX Attention's nonpad_kv_seqlen, and MultiHeadAttention's key padding mask.
  const bool onnx = p.alignment == CausalAlignment::kOnnx;
  const Tensor* nonpad = onnx ? ctx.input(kInputNonpadKvSeqlen) : nullptr;
  const Tensor* key_padding = onnx ? nullptr : ctx.input(kInputKeyPadding);
  const Tensor* sinks = onnx ? nullptr : ctx.input(kInputSinks);
  if (nonpad != nullptr && !p.accepts_nonpad_kv_seqlen) {
    return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": input 6 (nonpad_kv_seqlen) needs opset 24"));
  }
  if (key_padding != nullptr && mask != nullptr && !p.position_bias) {
    return absl::UnimplementedError(absl::StrCat(p.op_name, ": a key padding mask together with attn_mask"));
  }
  if (p.position_bias && mask == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": position_bias = 1 needs the bias (input 3)"));
  }

  ASSIGN_OR_RETURN(const AttentionShapes s, ResolveAttentionShapes(p, *q, *k, *v, past_key, past_value));
  const int64_t* valid_keys = nullptr;
  if (nonpad != nullptr) {
    ASSIGN_OR_RETURN(valid_keys, CheckNonpadKvSeqlen(p, s, *nonpad));
  }
  AttentionBias bias;
  bool large_bias = false;  // a position bias entry the kernels' fast path cannot take
  if (mask != nullptr) {
    ASSIGN_OR_RETURN(bias, PrepareAttentionBias(ctx, p, s, *mask));
    if (p.position_bias && HasLargePositionBias(s, bias.view)) {
      // Beyond the fast path's range: computed row by row from the fills, when the op has them.
      const bool fills_known = p.masked_rows == MaskedRows::kFills || p.masked_rows == MaskedRows::kNaN;
      if (!fills_known || p.softcap > 0.0f) RETURN_IF_ERROR(CheckPositionBiasRange(p, s, bias.view));
      large_bias = true;
    }
  }
  AttentionBias folded;  // a position bias with the key padding folded in; `bias` stays as given
  const StridedView scores_bias = bias.view;
  KeyPadding padding;
  if (key_padding != nullptr) {
    ASSIGN_OR_RETURN(padding, PrepareKeyPadding(ctx, p, s, *key_padding));
    // With no key hidden the subgraph's padding term adds zeros, which change
    // no score: the kernels then run as without the mask, reading no bias
    // (an unpadded prompt, the common case).
    if (padding.every_key_visible) key_padding = nullptr;
  }
  if (key_padding != nullptr) {
    if (mask != nullptr) {
      ASSIGN_OR_RETURN(folded, FoldKeyPadding(ctx, p, s, bias.view, padding));
    } else {
      bias.view = padding.bias;
    }
    valid_keys = padding.valid_keys.data();
  }
  Tensor sinks_f32;
  if (sinks != nullptr) {
    ASSIGN_OR_RETURN(sinks_f32, CheckSinks(ctx, p, s, *sinks));
  }
  ASSIGN_OR_RETURN(const AttentionOperands operands,
                   PrepareAttentionOperands(ctx, s, *q, *k, *v, past_key, past_value));

  ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(kOutputY, s.type, s.y_shape()));
  ASSIGN_OR_RETURN(Tensor y_f32, FloatTarget(ctx, *y));
  Tensor* qk = nullptr;
  Tensor qk_f32;
  if (kOutputQk < ctx.num_outputs() && ctx.output_wanted(kOutputQk)) {
    if (!onnx) RETURN_IF_ERROR(CheckProbabilitiesOutput(p));
    ASSIGN_OR_RETURN(qk, ctx.AllocateOutput(kOutputQk, s.type, s.qk_shape()));
    ASSIGN_OR_RETURN(qk_f32, FloatTarget(ctx, *qk));
  }

  if (p.max_kv_len > 0 && s.total_kv_len > p.max_kv_len)
    return absl::InvalidArgumentError(absl::StrCat(
        p.op_name, ": ", s.total_kv_len, " keys exceed the ", p.max_kv_len,
        " positions of the buffer the model computes its attention mask from (max_kv_len); the model cannot run "
        "inputs this long"));

  AttentionArgs args;
  args.batch = s.batch;
  args.q_heads = s.q_heads;
  args.kv_heads = s.kv_heads;
  args.q_len = s.q_len;
  args.kv_len = s.total_kv_len;
  args.head_dim = s.head_dim;
  args.v_head_dim = s.v_head_dim;
  args.q = operands.q;
  args.k = operands.k;
  args.v = operands.v;
  args.y = y_f32.data<float>();
  SetOutputStrides(s, args);
  args.scale =
      p.scale.has_value() ? *p.scale : (s.head_dim > 0 ? 1.0f / std::sqrt(static_cast<float>(s.head_dim)) : 1.0f);
  args.softcap = p.softcap;
  args.causal = p.causal;
  args.window = p.window;
  args.bias = folded.view.data != nullptr ? folded.view : bias.view;
  args.kv_valid_len = valid_keys;
  args.masked_rows = p.masked_rows;
  args.hidden_fills = p.hidden_fills;
  args.hidden_nonfinite = p.hidden_nonfinite;
  args.nan_rows_zeroed = p.nan_rows_zeroed;
  args.score_limit = p.score_limit;
  args.bias_is_scores = p.position_bias;
  if (p.position_bias) args.scores_bias = scores_bias;
  args.bias_into_mask = p.bias_into_mask;
  args.k_finite = operands.k_finite;
  args.v_finite = operands.v_finite;
  args.key_visible = key_padding != nullptr ? padding.visible.data() : nullptr;
  args.sinks = sinks != nullptr ? sinks_f32.data<float>() : nullptr;
  args.threads = ctx.threads();

  // The fused kernels apply a softcap after the bias; ONNX applies it before,
  // so that combination (and the materialised score output) takes the
  // row-by-row path, which follows ONNX's order exactly.
  const bool materialize = qk != nullptr || (p.softcap > 0.0f && args.bias.data != nullptr);
  float* qk_data = qk != nullptr ? qk_f32.data<float>() : nullptr;
  auto compute = [&](const AttentionArgs& a, float* qk_out) {
    return materialize ? RunMaterializedAttention(a, qk_out, p.qk_output_mode)
                       : RunAttention(a, ctx.options().attention_backend);
  };
  const std::vector<int64_t> offsets = CausalOffsets(p, s, nonpad != nullptr ? valid_keys : nullptr);
  if (offsets.size() == 1) {
    args.causal_offset = offsets[0];
    RETURN_IF_ERROR(compute(args, qk_data));
    PropagateNonFinite(args);
    if (large_bias) RecomputeLargePositionBiasRows(args);
  } else {
    const int64_t qk_batch_stride = s.q_heads * s.q_len * s.total_kv_len;
    for (int64_t b = 0; b < s.batch; ++b) {
      AttentionArgs one = BatchSlice(args, b);
      one.causal_offset = offsets[b];
      RETURN_IF_ERROR(compute(one, qk_data != nullptr ? qk_data + b * qk_batch_stride : nullptr));
      PropagateNonFinite(one);
    }
  }

  if (y->type() != ElementType::kFloat32) StoreFromFloat32(y_f32.data<float>(), *y);
  if (qk != nullptr && qk->type() != ElementType::kFloat32) StoreFromFloat32(qk_f32.data<float>(), *qk);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Kernel>> CreateMultiHeadAttentionKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(AttentionParams params, ParseMultiHeadAttentionParams(info));
  return std::unique_ptr<Kernel>(std::make_unique<AttentionKernel>(params));
}

absl::StatusOr<std::unique_ptr<Kernel>> CreateOnnxAttentionKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(AttentionParams params, ParseOnnxAttentionParams(info));
  return std::unique_ptr<Kernel>(std::make_unique<AttentionKernel>(params));
}

}  // namespace attune::attention
