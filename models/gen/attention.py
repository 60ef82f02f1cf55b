"""The course attention modules (DESIGN.md section 9), written from their descriptions.

MultiHeadAttention splits its work into small overridable steps (project, split heads,
scores, mask, merge) so that each exporter variant in variants.py changes one step only.
"""
import torch
from torch import nn


def causal_mask(context_length):
    """Bool (ctx, ctx): True above the diagonal = blocked."""
    return torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()


def window_mask(context_length, window):
    """Bool (ctx, ctx): causal, and also blocks keys `window` or more positions back."""
    ones = torch.ones(context_length, context_length)
    return causal_mask(context_length) | torch.tril(ones, diagonal=-window).bool()


class SingleHeadAttention(nn.Module):
    """Q, K, V from three bias-free Linear layers; softmax(Q·Kᵀ/√d_out)·V; no mask."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        self.W_value = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(1, 2) / self.d_out ** 0.5
        return torch.softmax(scores, dim=-1) @ v


class CausalSingleHeadAttention(SingleHeadAttention):
    """Single head plus a registered bool `mask` buffer, masked_fill(-inf) and dropout."""

    def __init__(self, d_in, d_out, context_length, dropout=0.1):
        super().__init__(d_in, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", causal_mask(context_length))

    def forward(self, x):
        num_tokens = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(1, 2)
        scores = scores.masked_fill(self.mask[:num_tokens, :num_tokens], float("-inf"))
        weights = torch.softmax(scores / self.d_out ** 0.5, dim=-1)
        return self.dropout(weights) @ v


class MultiHeadAttention(nn.Module):
    """Multi-head causal attention; W_q/W_k/W_v bias-free, W_o with bias.

    kv_heads < num_heads gives grouped-query attention (K/V repeated before the scores).
    """

    def __init__(self, d_in, d_out, context_length, num_heads, dropout=0.1, kv_heads=None):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.kv_heads = kv_heads or num_heads
        self.head_dim = d_out // num_heads
        kv_dim = self.kv_heads * self.head_dim
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, kv_dim, bias=False)
        self.W_value = nn.Linear(d_in, kv_dim, bias=False)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", self.build_mask(context_length))

    # ---- steps the variants override
    def build_mask(self, context_length):
        return causal_mask(context_length)

    def split_heads(self, t, b, num_tokens, heads):
        return t.view(b, num_tokens, heads, self.head_dim).transpose(1, 2)

    def split_keys(self, k, b, num_tokens):
        return self.split_heads(k, b, num_tokens, self.kv_heads)

    def repeat_kv(self, t):
        return t

    def scores(self, q, k):
        return q @ k.transpose(2, 3) / self.head_dim ** 0.5

    def apply_mask(self, scores, num_tokens):
        return scores.masked_fill(self.mask[:num_tokens, :num_tokens], float("-inf"))

    def normalize(self, scores):
        return torch.softmax(scores, dim=-1)

    # ---- the module
    def forward(self, x):
        b, num_tokens, _ = x.shape
        q = self.split_heads(self.W_query(x), b, num_tokens, self.num_heads)
        k = self.repeat_kv(self.split_keys(self.W_key(x), b, num_tokens))
        v = self.repeat_kv(self.split_heads(self.W_value(x), b, num_tokens, self.kv_heads))
        scores = self.apply_mask(self.scores(q, k), num_tokens)
        weights = self.dropout(self.normalize(scores))
        context = (weights @ v).transpose(1, 2)
        context = context.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)


class WindowMultiHeadAttention(MultiHeadAttention):
    """Sliding window: a position sees itself and the `window - 1` before it."""

    def __init__(self, *args, window=8, **kwargs):
        self.window = window
        super().__init__(*args, **kwargs)

    def build_mask(self, context_length):
        return window_mask(context_length, self.window)
