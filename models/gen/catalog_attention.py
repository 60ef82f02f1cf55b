"""The course modules and the exporter variants of causal multi-head attention."""
import attention as A
import variants as V
from spec import block, xy_spec

D_MODEL, HEADS, CTX = 64, 4, 64
HEAD_DIM = D_MODEL // HEADS


def mha(cls=A.MultiHeadAttention, **kw):
    return lambda: cls(D_MODEL, D_MODEL, CTX, HEADS, **kw)


def causal_blocks(**kw):
    return [block("causal", HEADS, HEAD_DIM, **kw)]


MHA_DESC = ("Multi-head causal attention, d_model 64, 4 heads of 16, context 64: bias-free "
            "W_q/W_k/W_v, W_o with bias, view/transpose head split, bool triu(1) buffer sliced "
            "[:T,:T] and masked_fill(-inf), softmax, dropout (eval), contiguous().view merge")


SPECS = [
    xy_spec("single_head",
            "Single-head attention, d_in 64 -> d_out 32, no mask: three bias-free Linear, "
            "Q·Kᵀ/√32, softmax(-1), ·V.",
            lambda: A.SingleHeadAttention(64, 32), 64, 7, [block("none", 1, 32)], 1, seed=1),
    xy_spec("causal_single_head",
            "Single-head causal attention, d_in 64 -> d_out 32, context 64: bool buffer "
            "triu(ones(64,64),1) sliced [:T,:T], masked_fill(-inf) applied BEFORE the "
            "division by √32 (course order), softmax, dropout (eval), ·V.",
            lambda: A.CausalSingleHeadAttention(64, 32, CTX), 64, 9,
            [block("causal", 1, 32)], 1, seed=2),
    xy_spec("mha_causal", MHA_DESC + ". Opset 17.", mha(), D_MODEL, 11, causal_blocks(), 1,
            seed=3),
    xy_spec("mha_causal_op13", MHA_DESC + ". Opset 13 (no Trilu; Slice/Where as at 17).",
            mha(), D_MODEL, 11, causal_blocks(), 1, seed=3, opset=13),
    xy_spec("mha_causal_op14", MHA_DESC + ". Opset 14.", mha(), D_MODEL, 11, causal_blocks(), 1,
            seed=3, opset=14),
    xy_spec("mha_window8",
            "As mha_causal with a sliding window of 8: a position sees itself and the 7 before "
            "it; bool buffer triu(1) | tril(-8) sliced [:T,:T], masked_fill(-inf).",
            mha(A.WindowMultiHeadAttention, window=8), D_MODEL, 13,
            [block("window", HEADS, HEAD_DIM, window=8)], 1, seed=4),
    xy_spec("mha_scale_on_q", "Q multiplied by 1/√D (Mul) before MatMul(Q, Kᵀ); no scale "
            "on the scores. Otherwise as mha_causal.", mha(V.ScaleOnQ), D_MODEL, 10,
            causal_blocks(), 1, seed=5),
    xy_spec("mha_sqrt_scale_both", "Q and K each multiplied by √(1/√D) = D^-0.25 before the "
            "MatMul. Otherwise as mha_causal.", mha(V.SqrtScaleBoth), D_MODEL, 12,
            causal_blocks(), 1, seed=6),
    xy_spec("mha_shape_scale", "Scores divided by k.size(-1) ** 0.5 computed in the graph "
            "(Shape -> Slice -> Squeeze -> Cast -> Pow). Otherwise as mha_causal.",
            mha(V.ShapeScale), D_MODEL, 14, causal_blocks(), 1, seed=7),
    xy_spec("mha_tril_runtime", "No mask buffer: mask built at run time as "
            "torch.tril(torch.ones(T,T)) == 0 (ConstantOfShape -> Trilu -> Equal), "
            "masked_fill(-inf). Otherwise as mha_causal.", mha(V.TrilRuntime), D_MODEL, 15,
            causal_blocks(), 1, seed=8),
    xy_spec("mha_additive_mask", "Float buffer 0 / -inf (above the diagonal) sliced [:T,:T] "
            "and Added to the scaled scores. Otherwise as mha_causal.", mha(V.AdditiveMask),
            D_MODEL, 9, causal_blocks(), 1, seed=9),
    xy_spec("mha_neg1e4_fill", "masked_fill with -1e4 instead of -inf. Otherwise as "
            "mha_causal.", mha(V.Neg1e4Fill), D_MODEL, 13, causal_blocks(), 1, seed=10),
    xy_spec("mha_gqa", "Grouped-query attention: 4 query heads, 2 K/V heads of 16 (W_k, W_v "
            "64 -> 32); K and V repeated by unsqueeze(2) -> expand -> reshape to 4 heads "
            "before the scores. Otherwise as mha_causal.", mha(V.GroupedQuery, kv_heads=2),
            D_MODEL, 11, causal_blocks(kv_num_heads=2), 1, seed=11),
    xy_spec("mha_k_pretransposed", "K viewed (B,T,H,D) and permuted straight to (B,H,D,T) "
            "(Transpose perm 0,2,3,1), scores = MatMul(Q, K) with no second transpose. "
            "Otherwise as mha_causal.", mha(V.KPretransposed), D_MODEL, 12, causal_blocks(),
            1, seed=12),
]
