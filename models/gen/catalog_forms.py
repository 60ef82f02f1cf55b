"""Attention in the forms other model libraries write (forms.py): Einsum, baddbmm, multi-query."""
import forms as F
from spec import block, xy_spec

D_MODEL, HEADS, CTX = 64, 4, 64
HEAD_DIM = D_MODEL // HEADS
MASK = ("GPT-NeoX causal mask: bool buffer bias = tril(ones(64, 64)) viewed (1, 1, 64, 64), "
        "sliced [:, :, k-q:k, :k], torch.where(bias, scores, finfo.min)")

# algebraic_simplify removes the baddbmm base; unmerge_heads then computes Mul(MatMul(q3, k3T), alpha)
# on the 3-D (B*4, T, 16) operands as the 4-D product that the view back to (B, 4, T, T) equals.
FUSED = ("Fused: the head merge of q and k and the view back of the scores cancel (unmerge_heads), so "
         "the patterns read the 4-D scores.")


def causal(**kw):
    return [block("causal", HEADS, HEAD_DIM, **kw)]


def form(cls, **kw):
    return lambda: cls(D_MODEL, HEADS, CTX, **kw)


SPECS = [
    xy_spec("forms_einsum_bhqd",
            "Causal attention, d_model 64, 4 heads of 16, written with torch.einsum on transposed "
            "heads: scores einsum('bhqd,bhkd->bhqk', q, k) / 4, context einsum('bhqk,bhkd->bhqd', "
            f"p, v). {MASK}.", form(F.EinsumAttention, heads_first=True), D_MODEL, 11, causal(), 1,
            seed=51),
    xy_spec("forms_einsum_bqhd",
            "As forms_einsum_bhqd with the heads not transposed: einsum('bqhd,bkhd->bhqk', q, k) "
            "and einsum('bhqk,bkhd->bqhd', p, v), then reshape to (B, T, 64).",
            form(F.EinsumAttention, heads_first=False), D_MODEL, 13, causal(), 1, seed=52),
    xy_spec("forms_baddbmm_neox",
            "GPT-NeoX/Pythia _attn: q, k reshaped (B*4, T, 16), scores = torch.baddbmm(zeros(B*4, "
            "T, T), q, k.transpose(1, 2), beta=1.0, alpha=1/sqrt(16)) viewed (B, 4, T, T), "
            f"{MASK}, softmax, matmul with v (B, 4, T, 16). {FUSED}",
            form(F.NeoXAttention), D_MODEL, 12, causal(), 1, seed=53),
    xy_spec("forms_baddbmm_empty",
            "As forms_baddbmm_neox with torch.baddbmm(torch.empty(B*4, T, T), q, kT, beta=0.0, "
            f"alpha=1/sqrt(16)). {FUSED}", form(F.NeoXAttention, empty_beta0=True), D_MODEL, 10,
            causal(), 1, seed=54),
    xy_spec("forms_multi_query",
            "Falcon-style multi-query attention: 4 query heads, one K/V head of 16 (k, v of shape "
            "(B, 1, T, 16)) that MatMul broadcasts against q (B, 4, T, 16); scores q @ kT / 4, "
            f"{MASK}.", form(F.MultiQueryAttention), D_MODEL, 11, causal(kv_num_heads=1), 1,
            seed=55),
    xy_spec("forms_bigcode_multi_query",
            "GPTBigCode (StarCoder, SantaCoder) multi-query attention: q (B, T, 64) reshaped to (B, T*4, "
            "16), one K/V head, scores torch.baddbmm(empty, q, k (B, 16, S), beta=0, alpha=1/4) viewed "
            "(B, T, 4, S), the bool tril buffer sliced and unsqueezed to (1, T, 1, S), "
            "torch.where(mask, w.float(), finfo.min), softmax, bmm with v (B, S, 16). unfold_query_heads "
            f"computes it on (B, H, T, .) heads, and it fuses as causal with one K/V head.",
            lambda: F.BigCodeMultiQueryAttention(D_MODEL, HEADS, CTX), D_MODEL, 12, causal(kv_num_heads=1), 1,
            seed=56),
]
