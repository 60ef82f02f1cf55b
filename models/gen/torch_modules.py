"""PyTorch's own attention modules as users write them: nn.MultiheadAttention and nn.TransformerEncoderLayer.

They merge the heads into the batch, (B·H, T, D), and reshape their masks to (B·H, T, S)."""
import torch
from torch import nn


def causal_float_mask(t):
    """nn.Transformer.generate_square_subsequent_mask: 0 on and below the diagonal, -inf above."""
    return nn.Transformer.generate_square_subsequent_mask(t)


class TorchMha(nn.Module):
    """nn.MultiheadAttention self-attention of x with the causal mask of generate_square_subsequent_mask
    (or its bool form sliced from a buffer of `context` positions, True hides; or none: causal=False), an
    optional key_padding_mask input (True pads) and optionally the weights (need_weights), averaged over the
    heads (B, T, S) or per head (B, H, T, S) (average_attn_weights)."""

    def __init__(self, d_model, heads, batch_first, bool_mask=False, padding=False, need_weights=False, context=64,
                 causal=True, average=True):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, heads, batch_first=batch_first)
        self.register_buffer("hidden", torch.triu(torch.ones(context, context, dtype=torch.bool), diagonal=1))
        self.batch_first, self.bool_mask, self.padding, self.need_weights = batch_first, bool_mask, padding, need_weights
        self.causal, self.average = causal, average

    def forward(self, x, key_padding_mask=None):
        t = x.shape[1] if self.batch_first else x.shape[0]
        mask = causal_float_mask(t) if self.causal else None
        if self.bool_mask and self.causal:
            mask = self.hidden[:t, :t]
        y, w = self.attn(x, x, x, attn_mask=mask, key_padding_mask=key_padding_mask if self.padding else None,
                         need_weights=self.need_weights, average_attn_weights=self.average)
        return (y, w) if self.need_weights else y


class TorchEncoderLayer(nn.Module):
    """nn.TransformerEncoderLayer (batch_first) with the causal src_mask; dropout off in eval."""

    def __init__(self, d_model, heads):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=2 * d_model, batch_first=True)

    def forward(self, x):
        return self.layer(x, src_mask=causal_float_mask(x.shape[1]))


class TorchMhaPadding(nn.Module):
    """nn.MultiheadAttention, sequence-first, with a key_padding_mask input (True pads) and no attn_mask."""

    def __init__(self, d_model, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, heads)

    def forward(self, x, key_padding_mask):
        return self.attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False)[0]


class TorchDecoderLayer(nn.Module):
    """nn.TransformerDecoderLayer (batch_first): causal self-attention (tgt_mask from
    generate_square_subsequent_mask) and cross-attention to `memory` without a mask."""

    def __init__(self, d_model, heads):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(d_model, heads, dim_feedforward=2 * d_model, batch_first=True)

    def forward(self, x, memory):
        return self.layer(x, memory, tgt_mask=causal_float_mask(x.shape[1]))


class TorchEncoder(nn.Module):
    """nn.TransformerEncoder of two sequence-first layers with the causal mask."""

    def __init__(self, d_model, heads):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=2 * d_model)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x, mask=causal_float_mask(x.shape[0]))


class TorchTransformer(nn.Module):
    """nn.Transformer (one encoder and one decoder layer, batch_first): the source unmasked, the target causal
    (generate_square_subsequent_mask), its padding given by a tgt_key_padding_mask input (True pads)."""

    def __init__(self, d_model, heads):
        super().__init__()
        self.model = nn.Transformer(d_model, heads, num_encoder_layers=1, num_decoder_layers=1,
                                    dim_feedforward=2 * d_model, batch_first=True)

    def forward(self, src, tgt, tgt_key_padding_mask):
        return self.model(src, tgt, tgt_mask=causal_float_mask(tgt.shape[1]),
                          tgt_key_padding_mask=tgt_key_padding_mask)


class TorchMhaShiftedMask(nn.Module):
    """A trap: nn.MultiheadAttention (batch_first) whose float attn_mask hides the diagonal as well
    (triu(diagonal=0) filled with -1e4): one key fewer than causal, row 0 sees no key (the mean of V)."""

    def __init__(self, d_model, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, heads, batch_first=True)

    def forward(self, x):
        t = x.shape[1]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool)).float() * -1e4
        return self.attn(x, x, x, attn_mask=mask, need_weights=False)[0]


class TorchMhaHeadMask(nn.Module):
    """A trap: nn.MultiheadAttention (sequence-first) with a 3-D (B·H, T, S) bool attn_mask input: any
    mask per batch and head, which only an explicit mask computes."""

    def __init__(self, d_model, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, heads)

    def forward(self, x, attn_mask):
        return self.attn(x, x, x, attn_mask=attn_mask, need_weights=False)[0]
