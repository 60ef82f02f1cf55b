"""Exporter variants of multi-head causal attention the fusion must handle.

Each class changes one step of attention.MultiHeadAttention; all stay exactly causal.
"""
import torch

from attention import MultiHeadAttention, causal_mask


class ScaleOnQ(MultiHeadAttention):
    """Q multiplied by 1/√D before the MatMul."""

    def scores(self, q, k):
        return (q * (1.0 / self.head_dim ** 0.5)) @ k.transpose(2, 3)


class SqrtScaleBoth(MultiHeadAttention):
    """√(1/√D) applied to Q and to K (the product carries 1/√D)."""

    def scores(self, q, k):
        s = self.head_dim ** -0.25
        return (q * s) @ (k * s).transpose(2, 3)


class ShapeScale(MultiHeadAttention):
    """Scale from the key's shape at run time: k.size(-1) ** 0.5 (Shape→…→Pow)."""

    def scores(self, q, k):
        return q @ k.transpose(2, 3) / k.size(-1) ** 0.5


class TrilRuntime(MultiHeadAttention):
    """Mask built at run time: torch.tril(torch.ones(T, T)) == 0 (no buffer)."""

    def apply_mask(self, scores, num_tokens):
        blocked = torch.tril(torch.ones(num_tokens, num_tokens)) == 0
        return scores.masked_fill(blocked, float("-inf"))


class AdditiveMask(MultiHeadAttention):
    """Float buffer 0 / -inf sliced [:T, :T] and added to the scores."""

    def build_mask(self, context_length):
        zeros = torch.zeros(context_length, context_length)
        return zeros.masked_fill(causal_mask(context_length), float("-inf"))

    def apply_mask(self, scores, num_tokens):
        return scores + self.mask[:num_tokens, :num_tokens]


class Neg1e4Fill(MultiHeadAttention):
    """masked_fill with -1e4 instead of -inf."""

    def apply_mask(self, scores, num_tokens):
        return scores.masked_fill(self.mask[:num_tokens, :num_tokens], -1e4)


class GroupedQuery(MultiHeadAttention):
    """Fewer K/V heads, repeated by unsqueeze → expand → reshape before the scores."""

    def repeat_kv(self, t):
        b, kv_heads, num_tokens, d = t.shape          # traced: Shape -> Gather
        groups = self.num_heads // self.kv_heads       # a Python int, as in HF repeat_kv
        t = t.unsqueeze(2).expand(b, kv_heads, groups, num_tokens, d)
        return t.reshape(b, kv_heads * groups, num_tokens, d)


class KPretransposed(MultiHeadAttention):
    """K viewed (B,T,H,D) and permuted straight to (B,H,D,T); scores = MatMul(Q, K)."""

    def split_keys(self, k, b, num_tokens):
        return k.view(b, num_tokens, self.kv_heads, self.head_dim).permute(0, 2, 3, 1)

    def scores(self, q, k):
        return q @ k / self.head_dim ** 0.5
