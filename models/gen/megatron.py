"""Megatron-style self-attention, sequence-first (T, B, C) throughout: baddbmm over B·H into a preallocated
buffer, query-key layer scaling (the scores divided by a layer coefficient next to √D, multiplied back
after the float cast), a causal mask sliced from a buffer of `context` positions, and the probabilities
viewed back to (B·H, T, S) for P·V."""
import math

import torch
from torch import nn


class MegatronSelfAttention(nn.Module):
    def __init__(self, d_model, heads, layer_number=3, context=64):
        super().__init__()
        self.heads, self.head_dim = heads, d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.dense = nn.Linear(d_model, d_model)
        self.coeff = float(layer_number)
        self.norm_factor = math.sqrt(self.head_dim) * self.coeff
        self.register_buffer("causal", torch.tril(torch.ones(context, context, dtype=torch.bool)).view(
            1, 1, context, context))

    def forward(self, x):
        t, b, c = x.shape
        qkv = self.qkv(x).view(t, b, self.heads, 3 * self.head_dim)
        q, k, v = torch.split(qkv, self.head_dim, dim=-1)  # (T, B, H, D) each
        s = k.size(0)
        q = q.reshape(t, b * self.heads, -1)
        k = k.reshape(s, b * self.heads, -1)
        buffer = torch.zeros(b * self.heads, t, s, dtype=q.dtype)
        scores = torch.baddbmm(buffer, q.transpose(0, 1), k.transpose(0, 1).transpose(1, 2), beta=0.0,
                               alpha=1.0 / self.norm_factor)
        scores = scores.view(b, self.heads, t, s)
        scores = scores.float() * self.coeff
        scores = scores.masked_fill(~self.causal[:, :, s - t:s, :s], -10000.0)
        probs = torch.softmax(scores, dim=-1).type_as(v)
        probs = probs.view(b * self.heads, t, s)
        v = v.reshape(s, b * self.heads, -1)
        context = torch.bmm(probs, v.transpose(0, 1))
        context = context.view(b, self.heads, t, self.head_dim).permute(2, 0, 1, 3).contiguous().view(t, b, c)
        return self.dense(context)
