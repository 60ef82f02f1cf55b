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


class ShiftedCausalMask(MultiHeadAttention):
    """triu(ones, 2) instead of triu(ones, 1): the causal mask shifted by one, so each query
    also sees the next key."""

    def build_mask(self, context_length):
        return torch.triu(torch.ones(context_length, context_length), diagonal=2).bool()


class TriuWindowMask(MultiHeadAttention):
    """A sliding window written with triu(-w) where tril(-w) was meant: causal | triu(ones, -w)
    hides the window itself and keeps the keys beyond it. Filled with finfo.min, so the first w
    rows (every key hidden) stay finite."""

    def __init__(self, *args, window=4, **kwargs):
        self.window = window
        super().__init__(*args, **kwargs)

    def build_mask(self, context_length):
        ones = torch.ones(context_length, context_length)
        return causal_mask(context_length) | torch.triu(ones, diagonal=-self.window).bool()

    def apply_mask(self, scores, num_tokens):
        return scores.masked_fill(self.mask[:num_tokens, :num_tokens], torch.finfo(scores.dtype).min)


class PadIdMask(MultiHeadAttention):
    """Token embeddings in, and the keys hidden where input_ids == pad_id (OPT's pad id 1) on top
    of the causal buffer: the mask reads token values, not an attention_mask."""

    def __init__(self, vocab, d_in, *args, pad_id=1, **kwargs):
        super().__init__(d_in, *args, **kwargs)
        self.embed = torch.nn.Embedding(vocab, d_in)
        self.pad_id = pad_id

    def forward(self, input_ids):
        self._pad = input_ids == self.pad_id
        return super().forward(self.embed(input_ids))

    def apply_mask(self, scores, num_tokens):
        blocked = self.mask[:num_tokens, :num_tokens] | self._pad[:, None, None, :]
        return scores.masked_fill(blocked, torch.finfo(scores.dtype).min)


class TopLeftCacheMask(MultiHeadAttention):
    """A KV cache whose causal mask is aligned top-left: triu(ones(T, past + T), 1), so the new
    queries are hidden from most of the past and from their own keys beyond row i (bottom-right
    alignment, the right one, is triu(ones, past + 1))."""

    def forward(self, x, past_key, past_value):
        b, num_tokens, _ = x.shape
        q = self.split_heads(self.W_query(x), b, num_tokens, self.num_heads)
        k = torch.cat([past_key, self.split_keys(self.W_key(x), b, num_tokens)], dim=2)
        v = torch.cat([past_value, self.split_heads(self.W_value(x), b, num_tokens, self.kv_heads)], dim=2)
        total = k.shape[2]
        blocked = torch.triu(torch.ones(num_tokens, total), diagonal=1).bool()
        scores = self.scores(q, k).masked_fill(blocked, float("-inf"))
        context = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2)
        return self.out_proj(context.contiguous().view(b, num_tokens, self.d_out)), k, v
