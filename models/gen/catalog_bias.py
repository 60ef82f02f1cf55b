"""Attention with a positional bias (forms_bias.py): MPT's ALiBi, T5's relative position bias
(encoder and decoder) and BLOOM's ALiBi, each with the causal and/or padding mask its library
combines with it; and the traps (a bias read from the scores, a bias that multiplies)."""
import numpy as np

import forms_bias as F
from spec import SEQ, ModelSpec, block, xy_spec

D_MODEL, HEADS, CTX, T = 64, 4, 64, 11
HEAD_DIM = D_MODEL // HEADS
PAD = 3  # positions of padding in batch row 1


def inputs(left, mask_dtype=np.int64, num_tokens=T):
    def make(module, rng):
        mask = np.ones((2, num_tokens), dtype=mask_dtype)
        if left:
            mask[1, :PAD] = 0
        else:
            mask[1, num_tokens - PAD:] = 0
        return {"x": rng.standard_normal((2, num_tokens, D_MODEL)).astype(np.float32),
                "attention_mask": mask}
    return make


def spec(name, description, build, opset, mask, expected, seed, left=True, extra=None, scale=None,
         layers=1, **kw):
    b = block(mask, HEADS, HEAD_DIM)
    if scale is not None:
        b["scale"] = scale   # the factor on Q.K^T when it is not 1/sqrt(head_dim)
    return ModelSpec(name=name, description=description, build=build, make_inputs=inputs(left, **kw),
                     input_names=["x", "attention_mask"], output_names=["y"],
                     dynamic_axes={"x": SEQ, "attention_mask": SEQ, "y": SEQ},
                     attention_blocks=[b] * layers, expected_fusions=expected,
                     opset=opset, seed=seed, extra=extra or {})


MPT = ("MPT attention as llm-foundry writes it (attn_impl='torch', alibi=True, alibi_bias_max 8): "
       "fused Wqkv, chunk, q (B, 4, T, 16), k rearranged (B, 4, 16, T); attn_weight = q @ k * "
       "softmax_scale; the ALiBi bias of MPTModel._attn_bias, a (1, 4, 1, 64) buffer slopes * "
       "arange(1 - 64, 1) (slopes 1 / 2^(2m), m = 1..4), sliced to its last S keys, added; "
       "masked_fill(~key_padding_mask.view(b, 1, 1, s), finfo.min); the causal mask ~tril(ones(s, s)) "
       "masked_fill with finfo.min; softmax; batch row 1 left-padded by 3.")
T5 = ("T5Attention as Hugging Face modeling_t5 writes it, two T5LayerSelfAttention layers as T5Stack "
      "runs them (T5LayerNorm, residual; layer 0 computes position_bias with the mask added into it, "
      "layer 1 adds the same tensor): q, k, v, o without bias, scores = torch.matmul(q, k.transpose(3, 2)) with no "
      "scale; position_bias = compute_bias(T, S): relative_position_bucket (num_buckets 32, "
      "max_distance 128, log buckets beyond 8) looked up in an nn.Embedding(32, 4) table, permuted "
      "to (1, 4, T, S)")
SPECS = [
    spec("forms_alibi_mpt", MPT, lambda: F.MPTAttention(D_MODEL, HEADS, CTX), 14, "causal+padding+bias",
         1, 61),
    spec("forms_alibi_mpt_op17", MPT + " Exported at opset 17, attention_mask as bool.",
         lambda: F.MPTAttention(D_MODEL, HEADS, CTX), 17, "causal+padding+bias", 1, 62, mask_dtype=bool),
    spec("forms_alibi_hf_mpt",
         "MPT as Hugging Face modeling_mpt writes it: build_mpt_alibi_tensor(4, 64) of shape (4, 1, 64) "
         "(slopes 1 / 2^(2m) times arange(1 - 64, 1)), sliced [:, max(0, 1 - T):, max(0, 64 - S):] and "
         "added to q @ k^T * softmax_scale; the mask of _prepare_4d_causal_attention_mask (a causal "
         "finfo.min triangle with the inverted padding filled in) compared < -1 and applied with one "
         "masked_fill(finfo.min); softmax(scores.float()); batch row 1 left-padded by 3.",
         lambda: F.HFMptAttention(D_MODEL, HEADS, CTX), 17, "causal+padding+bias", 1, 69),
    spec("forms_alibi_query_axis",
         "As forms_alibi_mpt with the ALiBi buffer transposed to (1, 4, 64, 1), so the slope "
         "multiplies the query position and the bias is sliced along the query axis. Not a real "
         "ALiBi: the fused op must add exactly the tensor the graph computes, whatever its "
         "broadcast shape.", lambda: F.MPTAttention(D_MODEL, HEADS, CTX, query_axis=True), 17,
         "causal+padding+bias", 1, 63),
    spec("forms_t5_encoder", T5 + " with bidirectional buckets, plus the encoder's extended mask "
         "(1 - attention_mask[:, None, None, :]) * finfo.min added into position_bias; scores += "
         "position_bias; softmax(scores.float()).type_as(scores); batch row 1 right-padded by 3.",
         lambda: F.T5SelfAttentionStack(D_MODEL, HEADS, is_decoder=False), 13, "padding+bias", 2, 64,
         left=False, scale=1.0, layers=2),
    spec("forms_t5_decoder", T5 + " with causal buckets (bidirectional=False), plus the decoder's "
         "extended mask: causal (arange <= arange, repeated over the batch) times "
         "attention_mask[:, None, None, :], (1 - m) * finfo.min, added into position_bias; batch "
         "row 1 left-padded by 3.", lambda: F.T5SelfAttentionStack(D_MODEL, HEADS, is_decoder=True),
         17, "causal+padding+bias", 2, 65, scale=1.0, layers=2),
]

BLOOM = ("BLOOM attention as Hugging Face modeling_bloom writes it: fused query_key_value viewed "
         "(B, T, 4, 3, 16); alibi = build_alibi_tensor(attention_mask, 4): slopes * "
         "((cumsum(attention_mask) - 1) * attention_mask), reshaped (B*4, 1, S); q, v reshaped "
         "(B*4, T, 16), k (B*4, 16, T); scores = alibi.baddbmm(q, k, beta=1.0, alpha=1/sqrt(16)) "
         "viewed (B, 4, T, S); masked_fill(causal | ~attention_mask, finfo.min); softmax (float32); "
         "viewed (B*4, T, S), torch.bmm with v; batch row 1 left-padded by 3.")
NEG = {"negative": True, "expected_causal_fusions": 0, "explicit_fusion_allowed": False}
SPECS += [
    spec("forms_alibi_bloom", BLOOM, lambda: F.BloomAttention(D_MODEL, HEADS),
         17, "causal+padding+bias", 1, 66),
    xy_spec("negative/bias_from_scores",
         "NEGATIVE. As forms_alibi_mpt (no padding) but the added 'bias' is the scores' own mean "
         "over the queries (scores + scores.mean(-2, keepdim=True)): it reads the scores, so it is "
         "not a tensor the fused op could be given, and the chain is not scores plus a constant.",
         lambda: F.ScoreDependentBias(D_MODEL, HEADS, CTX), D_MODEL, T,
         [block("explicit", HEADS, HEAD_DIM)], 0, seed=67, extra=dict(NEG, trap="bias_reads_scores")),
    xy_spec("negative/bias_multiplied",
         "NEGATIVE. As forms_alibi_mpt (no padding) but the ALiBi tensor multiplies the scores "
         "(scores * (1 - alibi)) instead of being added.",
         lambda: F.MultipliedBias(D_MODEL, HEADS, CTX), D_MODEL, T,
         [block("explicit", HEADS, HEAD_DIM)], 0, seed=68, extra=dict(NEG, trap="bias_multiplied")),
]
