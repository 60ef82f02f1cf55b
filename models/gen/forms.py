"""Attention written the way other model libraries write it, for the canonicalisation passes.

Every module is one causal attention block, d_model 64, 4 heads of 16, context 64, with the
Hugging Face GPT-NeoX causal mask: a registered bool buffer `bias` = tril(ones) viewed
(1, 1, ctx, ctx), sliced [:, :, k-q:k, :k], then torch.where(bias, scores, finfo.min).
- EinsumAttention: scores and context by torch.einsum, heads transposed first
  ("bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd") or not ("bqhd,bkhd->bhqk", "bhqk,bkhd->bqhd").
- NeoXAttention: GPT-NeoX/Pythia's _attn: q, k viewed (B*H, T, D), scores =
  torch.baddbmm(zeros(B*H, T, T), q, k.transpose(1, 2), beta=1.0, alpha=1/norm_factor), viewed
  back to (B, H, T, T). `empty_beta0` writes the form of the brief (torch.empty, beta=0.0).
- MultiQueryAttention: Falcon-style, one K/V head of shape (B, 1, T, D) that MatMul broadcasts
  against the (B, H, T, D) queries.
"""
import torch
from torch import nn


class CausalBlock(nn.Module):
    """Projections, head split and the GPT-NeoX causal mask that every form shares."""

    def __init__(self, d_model, num_heads, context, kv_heads=None):
        super().__init__()
        self.num_heads = num_heads
        self.kv_heads = kv_heads or num_heads
        self.head_dim = d_model // num_heads
        self.d_model = d_model
        self.query = nn.Linear(d_model, d_model)
        self.key_value = nn.Linear(d_model, 2 * self.kv_heads * self.head_dim)
        self.dense = nn.Linear(d_model, d_model)
        self.register_buffer(
            "bias", torch.tril(torch.ones((context, context), dtype=torch.bool)).view(1, 1, context, context),
            persistent=False)
        self.norm_factor = self.head_dim ** 0.5

    def project(self, x):
        """q (B, T, H, D); k, v (B, T, kv_heads, D): heads not yet transposed."""
        b, t, _ = x.shape
        q = self.query(x).view(b, t, self.num_heads, self.head_dim)
        k, v = self.key_value(x).split(self.kv_heads * self.head_dim, dim=-1)
        return q, k.view(b, t, self.kv_heads, self.head_dim), v.view(b, t, self.kv_heads, self.head_dim)

    def mask(self, scores, query_length, key_length):
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        return torch.where(causal_mask, scores, mask_value)

    def merge(self, context):
        """(B, H, T, D) -> dense((B, T, H*D))."""
        b, _, t, _ = context.shape
        return self.dense(context.transpose(1, 2).contiguous().view(b, t, self.d_model))


class EinsumAttention(CausalBlock):
    def __init__(self, *args, heads_first=True, **kw):
        super().__init__(*args, **kw)
        self.heads_first = heads_first

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.project(x)
        if self.heads_first:
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / self.norm_factor
        else:
            scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.norm_factor
        weights = torch.softmax(self.mask(scores, t, t), dim=-1)
        if self.heads_first:
            return self.merge(torch.einsum("bhqk,bhkd->bhqd", weights, v))
        context = torch.einsum("bhqk,bkhd->bqhd", weights, v)
        return self.dense(context.reshape(b, t, self.d_model))


class NeoXAttention(CausalBlock):
    def __init__(self, *args, empty_beta0=False, **kw):
        super().__init__(*args, **kw)
        self.empty_beta0 = empty_beta0

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (u.transpose(1, 2) for u in self.project(x))
        query_length, key_length = q.size(-2), k.size(-2)
        q = q.reshape(b * self.num_heads, query_length, self.head_dim)
        k = k.reshape(b * self.num_heads, key_length, self.head_dim)
        if self.empty_beta0:
            base = torch.empty(b * self.num_heads, query_length, key_length, dtype=q.dtype)
            scores = torch.baddbmm(base, q, k.transpose(1, 2), beta=0.0, alpha=1.0 / self.norm_factor)
        else:
            base = torch.zeros(b * self.num_heads, query_length, key_length, dtype=q.dtype)
            alpha = torch.tensor(1.0) / torch.tensor(self.norm_factor)
            scores = torch.baddbmm(base, q, k.transpose(1, 2), beta=1.0, alpha=alpha)
        scores = scores.view(b, self.num_heads, query_length, key_length)
        weights = torch.softmax(self.mask(scores, query_length, key_length), dim=-1)
        return self.merge(torch.matmul(weights, v))


class MultiQueryAttention(CausalBlock):
    def __init__(self, *args, **kw):
        super().__init__(*args, kv_heads=1, **kw)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (u.transpose(1, 2) for u in self.project(x))   # k, v: (B, 1, T, D)
        scores = q @ k.transpose(-1, -2) / self.norm_factor
        weights = torch.softmax(self.mask(scores, t, t), dim=-1)
        return self.merge(weights @ v)


class BigCodeMultiQueryAttention(nn.Module):
    """GPTBigCode (StarCoder, SantaCoder) with multi_query: one c_attn Linear gives q (B, T, H*D) and one
    K/V head split off its end; the heads fold into the query axis instead of the batch:
    q.reshape(B, T*H, D) times key.transpose(-1, -2) (B, D, S) by torch.baddbmm(empty, q, k, beta=0,
    alpha=1/sqrt(D)), viewed (B, T, H, S); the causal mask is the bool buffer `bias` sliced [k-q:k, :k]
    and unsqueezed to (1, T, 1, S) for the head axis, torch.where(mask, w, finfo.min) with the softmax in
    float32 (upcast), then bmm(w.view(B, T*H, S), v) viewed (B, T, H*D)."""

    def __init__(self, d_model, num_heads, context):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.d_model = d_model
        self.c_attn = nn.Linear(d_model, d_model + 2 * self.head_dim)
        self.c_proj = nn.Linear(d_model, d_model)
        self.register_buffer("bias", torch.tril(torch.ones((context, context), dtype=torch.bool)),
                             persistent=False)

    def forward(self, x):
        b, t, _ = x.shape
        query, key_value = self.c_attn(x).split((self.d_model, 2 * self.head_dim), dim=2)
        key, value = key_value.split((self.head_dim, self.head_dim), dim=-1)
        key = key.transpose(-1, -2)                          # (B, D, S)
        key_length = key.size(-1)
        attn_shape = (b, t, self.num_heads, key_length)
        attn_view = (b, t * self.num_heads, key_length)
        q = query.reshape(b, t * self.num_heads, self.head_dim)
        scale_factor = 1.0 / self.head_dim ** 0.5
        attn_weights = torch.empty(attn_view, dtype=query.dtype)
        attn_weights = torch.baddbmm(attn_weights, q, key, beta=0, alpha=scale_factor).view(attn_shape)
        mask = self.bias[None, key_length - t:key_length, :key_length].unsqueeze(2)   # (1, T, 1, S)
        mask_value = torch.full([], torch.finfo(torch.float32).min, dtype=torch.float32)
        attn_weights = torch.where(mask, attn_weights.float(), mask_value)
        attn_weights = torch.softmax(attn_weights, dim=-1).to(query.dtype)
        attn_output = torch.bmm(attn_weights.view(attn_view), value).view(b, t, self.d_model)
        return self.c_proj(attn_output)
