"""Mistral's sliding-window attention as Hugging Face transformers writes it (modeling_mistral, eager
attention, versions 4.36-4.45), with the 4-D mask of AttentionMaskConverter.

The mask, as `_prepare_4d_causal_attention_mask(attention_mask, (B, T), x, past, sliding_window)`
builds it (AttentionMaskConverter(is_causal=True, sliding_window=w).to_4d):
- `_make_causal_mask`: torch.full((T, T), finfo.min), masked_fill_(arange < (arange + 1).view(T, 1), 0),
  zeros for the past concatenated on the left, then the sliding window, written three ways across
  versions:
  - "triu" (4.36): context_mask = 1 - triu(ones_like(mask, int), diagonal=past - w + 1): a query sees
    itself and the w - 1 keys before it;
  - "tril" (4.37 on): context_mask = tril(ones_like(mask, bool), diagonal=past - w - 1): itself and
    the w keys before it (the fix that made the window one key wider);
  - "range" (4.43 on): context_mask = col_indices <= row_indices + (past - w - 1), the same window
    written with aranges;
  then mask.masked_fill_(context_mask, finfo.min), expanded to (B, 1, T, past + T);
- `_expand_mask` of the 2-D attention_mask: 1 - mask[:, None, None, :].expand(B, 1, T, S).to(float),
  masked_fill(inverted.to(bool), finfo.min);
- combined as causal_4d_mask.masked_fill(expanded_mask.bool(), finfo.min).
The attention: q/k/v/o bias-free Linear layers, heads split by view + transpose(1, 2), K/V of fewer heads
(GQA) concatenated with the past on the sequence axis (present = the un-repeated cat), repeat_kv by
expand + reshape, scores matmul(q, k.transpose(2, 3)) / sqrt(head_dim) + mask, softmax in float32, matmul
with V, heads merged by transpose(1, 2) + contiguous + reshape. Rotary embeddings are left out: the mask is
what these models test.
"""
import math

import torch
from torch import nn

import forms_merged
import hf_llama

# The keys a query sees with sliding_window = w, by the way the version writes the window: the
# fused op's `window` (itself and window - 1 keys before it).
SEEN_KEYS = {"triu": lambda w: w, "tril": lambda w: w + 1, "range": lambda w: w + 1}


def make_causal_mask(tgt_len, past, dtype, sliding_window, form):
    """AttentionMaskConverter._make_causal_mask: (T, past + T), 0 where seen, finfo.min elsewhere."""
    mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min)
    mask_cond = torch.arange(mask.size(-1))
    mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    mask = mask.to(dtype)
    if past > 0:
        mask = torch.cat([torch.zeros(tgt_len, past, dtype=dtype), mask], dim=-1)
    if form == "triu":
        diagonal = past - sliding_window + 1
        context_mask = 1 - torch.triu(torch.ones_like(mask, dtype=torch.int), diagonal=diagonal)
        mask.masked_fill_(context_mask.bool(), torch.finfo(dtype).min)
    elif form == "tril":
        diagonal = past - sliding_window - 1
        context_mask = torch.tril(torch.ones_like(mask, dtype=torch.bool), diagonal=diagonal)
        mask.masked_fill_(context_mask, torch.finfo(dtype).min)
    else:
        diagonal = past - sliding_window - 1
        row_indices = torch.arange(mask.size(0)).view(-1, 1)
        col_indices = torch.arange(mask.size(1))
        context_mask = (col_indices <= row_indices + diagonal).bool().expand_as(mask)
        mask.masked_fill_(context_mask, torch.finfo(dtype).min)
    return mask


def prepare_4d_causal_attention_mask(attention_mask, input_shape, dtype, past, sliding_window, form):
    bsz, tgt_len = input_shape
    causal = make_causal_mask(tgt_len, past, dtype, sliding_window, form)
    causal = causal[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past)
    expanded = forms_merged.expand_mask(attention_mask, dtype, tgt_len)
    return causal.masked_fill(expanded.bool(), torch.finfo(dtype).min)


class MistralAttention(nn.Module):
    def __init__(self, d_model, num_heads, kv_heads):
        super().__init__()
        self.num_heads = num_heads
        self.num_key_value_heads = kv_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(d_model, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(d_model, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, d_model, bias=False)

    def forward(self, hidden_states, attention_mask, past_key=None, past_value=None):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads,
                                                     self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads,
                                                       self.head_dim).transpose(1, 2)
        if past_key is not None:
            key_states = torch.cat([past_key, key_states], dim=2)
            value_states = torch.cat([past_value, value_states], dim=2)
        present = (key_states, value_states)
        n_rep = self.num_heads // self.num_key_value_heads
        key_states = hf_llama.repeat_kv(key_states, n_rep)
        value_states = hf_llama.repeat_kv(value_states, n_rep)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)
        attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous().reshape(bsz, q_len, -1)
        return self.o_proj(attn_output), present


class MistralWindowAttention(nn.Module):
    """forward(x (B, T, d), attention_mask int64 (B, T)) -> y; or, with `cache`,
    forward(x, attention_mask (B, past + T), past_key, past_value) -> (y, present_key, present_value)."""

    def __init__(self, d_model, num_heads, kv_heads, sliding_window, form, cache=False):
        super().__init__()
        self.self_attn = MistralAttention(d_model, num_heads, kv_heads)
        self.sliding_window = sliding_window
        self.form = form
        self.cache = cache

    def forward(self, x, attention_mask, past_key=None, past_value=None):
        past = past_key.shape[2] if past_key is not None else 0
        mask = prepare_4d_causal_attention_mask(attention_mask, (x.shape[0], x.shape[1]), x.dtype, past,
                                                self.sliding_window, self.form)
        y, (k, v) = self.self_attn(x, mask, past_key, past_value)
        return (y, k, v) if self.cache else y
