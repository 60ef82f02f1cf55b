"""Attention modules that look like causal attention but are not: the fusion must not fire.

Every mask keeps at least one key per softmax row, so outputs stay finite.
"""
import torch

from attention import MultiHeadAttention, causal_mask


class NonCausalConstMask(MultiHeadAttention):
    """Constant bool buffer: the causal mask with ~4% of entries flipped at random
    (diagonal always kept), so it is almost, but not, causal."""

    def build_mask(self, context_length):
        g = torch.Generator().manual_seed(1234)
        flips = torch.rand(context_length, context_length, generator=g) < 0.04
        flips.fill_diagonal_(False)
        return causal_mask(context_length) ^ flips


class AntiCausalMask(MultiHeadAttention):
    """tril instead of triu: blocks the past (j < i), keeps itself and the future."""

    def build_mask(self, context_length):
        ones = torch.ones(context_length, context_length)
        return torch.tril(ones, diagonal=-1).bool()


class PaddingMaskInput(MultiHeadAttention):
    """The causal buffer OR'ed with a bool key-padding mask given as a model input
    (attention_mask: True = real token). Only the first term is causal."""

    def forward(self, x, attention_mask):
        self._pad = attention_mask
        return super().forward(x)

    def apply_mask(self, scores, num_tokens):
        blocked = self.mask[:num_tokens, :num_tokens] | ~self._pad[:, None, None, :]
        return scores.masked_fill(blocked, float("-inf"))


class SoftmaxWrongAxis(MultiHeadAttention):
    """Causal mask, but softmax over the query axis (dim=-2)."""

    def normalize(self, scores):
        return torch.softmax(scores, dim=-2)


class ScaleFromInput(MultiHeadAttention):
    """Causal mask, but scores divided by a value computed from the input data."""

    def forward(self, x):
        self._scale = x.abs().max()
        return super().forward(x)

    def scores(self, q, k):
        return q @ k.transpose(2, 3) / self._scale
