"""T5's decoder with its cache, written the way Hugging Face transformers writes it (modeling_t5 4.30-4.40,
eager), as a decoder-with-past export carries it (the graph Optimum's seq2seq exports run per token):

- T5Attention with shape() = view(B, -1, H, D).transpose(1, 2) and unshape(); no scale on the scores;
- self-attention: the past keys and values (B, H, past, D) concatenated on axis 2 before the new ones;
  real_seq_length = past + T; layer 0 computes compute_bias(real_seq_length, key_length) with causal
  buckets (bidirectional=False), slices the last queries position_bias[:, :, -T:, :], adds the decoder's
  extended mask into it, and the later layers are given that same (masked) tensor;
- the decoder's extended mask of get_extended_attention_mask: causal = arange <= arange repeated over the
  batch, with a prefix of ones for the cached keys (torch.cat of ones (B, T, mask_len - T)), times
  attention_mask[:, None, None, :], then (1 - m) * finfo.min;
- cross-attention on the cached encoder keys and values (B, H, enc, D), given as inputs and read as they
  are (query_length given, so key_length is the cache's): its position_bias is zeros (1, H, real, enc)
  sliced to the last T rows, plus the inverted encoder_attention_mask;
- softmax(scores.float()).type_as(scores); T5LayerNorm (RMS, no bias); ReLU feed-forward; the final
  scaling by d_model ** -0.5 and an lm_head tied to the shared embedding (drawn N(0, 0.02), so that the
  logits stay O(1)).

Without a past (the prefill run that makes the decode sample's cache) the cross keys and values are the
projections of a fixed encoder output held by the module.
"""
import torch
import torch.nn.functional as F
from torch import nn

import forms_bias


class T5CachedAttention(forms_bias.T5Attention):
    """forms_bias's T5Attention (projections, buckets, compute_bias) with modeling_t5's cache handling."""

    def forward(self, hidden_states, mask=None, key_value_states=None, position_bias=None, past_key_value=None,
                query_length=None):
        batch_size, seq_length = hidden_states.shape[:2]
        real_seq_length = seq_length
        if past_key_value is not None:
            real_seq_length += past_key_value[0].shape[2] if query_length is None else query_length
        cross = key_value_states is not None or query_length is not None
        if key_value_states is not None:
            key_length = key_value_states.shape[1]
        elif cross:
            key_length = past_key_value[0].shape[2]
        else:
            key_length = real_seq_length

        def shape(states):
            return states.view(batch_size, -1, self.n_heads, self.key_value_proj_dim).transpose(1, 2)

        def unshape(states):
            return states.transpose(1, 2).contiguous().view(batch_size, -1, self.inner_dim)

        def project(proj_layer, past):
            if not cross:
                states = shape(proj_layer(hidden_states))
                return states if past is None else torch.cat([past, states], dim=2)
            return shape(proj_layer(key_value_states)) if past is None else past

        query_states = shape(self.q(hidden_states))
        key_states = project(self.k, past_key_value[0] if past_key_value is not None else None)
        value_states = project(self.v, past_key_value[1] if past_key_value is not None else None)
        scores = torch.matmul(query_states, key_states.transpose(3, 2))
        if position_bias is None:
            if not self.has_relative_attention_bias:
                position_bias = torch.zeros((1, self.n_heads, real_seq_length, key_length), dtype=scores.dtype)
            else:
                position_bias = self.compute_bias(real_seq_length, key_length)
            if past_key_value is not None:
                position_bias = position_bias[:, :, -hidden_states.size(1):, :]
            if mask is not None:
                position_bias = position_bias + mask
        scores += position_bias
        attn_weights = F.softmax(scores.float(), dim=-1).type_as(scores)
        attn_output = self.o(unshape(torch.matmul(attn_weights, value_states)))
        return attn_output, (key_states, value_states), position_bias


class T5DecoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, has_relative_attention_bias):
        super().__init__()
        self.self_ln = forms_bias.T5LayerNorm(d_model)
        self.self_attn = T5CachedAttention(d_model, n_heads, is_decoder=True,
                                           has_relative_attention_bias=has_relative_attention_bias)
        self.cross_ln = forms_bias.T5LayerNorm(d_model)
        self.cross_attn = T5CachedAttention(d_model, n_heads, is_decoder=True, has_relative_attention_bias=False)
        self.ff_ln = forms_bias.T5LayerNorm(d_model)
        self.wi = nn.Linear(d_model, 4 * d_model, bias=False)
        self.wo = nn.Linear(4 * d_model, d_model, bias=False)

    def forward(self, hidden_states, mask, position_bias, encoder_states, encoder_mask, cross_bias, past):
        self_past = past[:2] if past is not None else None
        cross_past = past[2:] if past is not None else None
        y, self_present, position_bias = self.self_attn(self.self_ln(hidden_states), mask=mask,
                                                        position_bias=position_bias, past_key_value=self_past)
        hidden_states = hidden_states + y
        query_length = self_present[0].shape[2]
        y, cross_present, cross_bias = self.cross_attn(
            self.cross_ln(hidden_states), mask=encoder_mask, key_value_states=encoder_states,
            position_bias=cross_bias, past_key_value=cross_past, query_length=query_length)
        hidden_states = hidden_states + y
        hidden_states = hidden_states + self.wo(F.relu(self.wi(self.ff_ln(hidden_states))))
        return hidden_states, self_present, cross_present, position_bias, cross_bias


def decoder_extended_mask(attention_mask, input_shape):
    """create_extended_attention_mask_for_decoder with the cached-keys prefix, then (1 - m) * finfo.min."""
    batch_size, seq_length = input_shape
    seq_ids = torch.arange(seq_length)
    causal_mask = seq_ids[None, None, :].repeat(batch_size, seq_length, 1) <= seq_ids[None, :, None]
    causal_mask = causal_mask.to(attention_mask.dtype)
    if causal_mask.shape[1] < attention_mask.shape[1]:
        prefix_seq_len = attention_mask.shape[1] - causal_mask.shape[1]
        causal_mask = torch.cat([torch.ones((batch_size, seq_length, prefix_seq_len), dtype=causal_mask.dtype),
                                 causal_mask], axis=-1)
    extended = (causal_mask[:, None, :, :] * attention_mask[:, None, None, :]).to(torch.float32)
    return (1.0 - extended) * torch.finfo(torch.float32).min


class T5DecoderWithPast(nn.Module):
    """forward(input_ids, attention_mask, encoder_attention_mask[, past.0.decoder.key, past.0.decoder.value,
    past.0.encoder.key, past.0.encoder.value, ...]) -> logits, then per layer the decoder's present key and
    value (and, without a past, the encoder's keys and values too: the cache a decode step reads)."""

    def __init__(self, vocab, d_model, n_heads, layers, encoder_length, batch=2):
        super().__init__()
        self.model_dim = d_model
        self.shared = nn.Embedding(vocab, d_model)
        self.block = nn.ModuleList(T5DecoderBlock(d_model, n_heads, i == 0) for i in range(layers))
        self.final_layer_norm = forms_bias.T5LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        with torch.no_grad():
            self.shared.weight.normal_(0.0, 0.02)
        self.lm_head.weight = self.shared.weight
        self.register_buffer("encoder_hidden_states", torch.randn(batch, encoder_length, d_model))

    def forward(self, input_ids, attention_mask, encoder_attention_mask, *past):
        layers = len(self.block)
        past_key_values = [past[4 * i: 4 * i + 4] for i in range(layers)] if past else [None] * layers
        hidden_states = self.shared(input_ids)
        mask = decoder_extended_mask(attention_mask, input_ids.size())
        encoder_mask = (1.0 - encoder_attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(
            torch.float32).min
        encoder_states = None if past else self.encoder_hidden_states
        position_bias, cross_bias = None, None
        presents = []
        for block, layer_past in zip(self.block, past_key_values):
            hidden_states, self_present, cross_present, position_bias, cross_bias = block(
                hidden_states, mask, position_bias, encoder_states, encoder_mask, cross_bias, layer_past)
            presents += list(self_present) + ([] if past else list(cross_present))
        sequence_output = self.final_layer_norm(hidden_states) * (self.model_dim ** -0.5)
        return (self.lm_head(sequence_output), *presents)
