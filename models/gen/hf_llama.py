"""One LLaMA attention block with the 4-D mask Hugging Face transformers builds for it
(modeling_llama, versions 4.38-4.47, eager attention, no cache).

The forms an export of the real thing carries, each kept here:
- `_update_causal_mask`: torch.full((T, T), finfo.min).triu(1), multiplied in place by
  arange(T) > cache_position.reshape(-1, 1), expanded to (B, 1, T, T) and cloned; then the
  padding from the 2-D attention_mask is written into it with a slice assignment,
  causal_mask[:, :, :, :n] = causal_mask[:, :, :, :n].masked_fill(padding_mask, finfo.min),
  which torch.onnx.export writes as ScatterND into the cloned mask;
- q/k/v/o projections as bias-free Linear layers, heads split by view + transpose(1, 2);
- scores = matmul(q, k.transpose(2, 3)) / sqrt(head_dim), plus the mask sliced to the key length;
- softmax in float32, matmul with V, heads merged by transpose(1, 2) + contiguous + reshape.
Rotary embeddings and the rest of the decoder layer are left out: the mask is what this model tests.
"""
import math

import torch
from torch import nn


def update_causal_mask(attention_mask, input_tensor, cache_position):
    """The 4-D additive mask (B, 1, T, n): 0 where a query may attend, finfo.min elsewhere."""
    dtype = input_tensor.dtype
    min_dtype = torch.finfo(dtype).min
    sequence_length = input_tensor.shape[1]
    target_length = attention_mask.shape[-1]
    causal_mask = torch.full((sequence_length, target_length), fill_value=min_dtype, dtype=dtype)
    if sequence_length != 1:
        causal_mask = torch.triu(causal_mask, diagonal=1)
    causal_mask *= torch.arange(target_length) > cache_position.reshape(-1, 1)
    causal_mask = causal_mask[None, None, :, :].expand(input_tensor.shape[0], 1, -1, -1)
    causal_mask = causal_mask.clone()  # copy to contiguous memory for the in-place edit
    mask_length = attention_mask.shape[-1]
    padding_mask = causal_mask[:, :, :, :mask_length] + attention_mask[:, None, None, :]
    padding_mask = padding_mask == 0
    causal_mask[:, :, :, :mask_length] = causal_mask[:, :, :, :mask_length].masked_fill(padding_mask, min_dtype)
    return causal_mask


class LlamaAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, hidden_states, attention_mask):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.reshape(bsz, q_len, -1)
        return self.o_proj(attn_output)


class LlamaMaskedAttention(nn.Module):
    """forward(x (B, T, d_model), attention_mask int64 (B, T)) -> y (B, T, d_model)."""

    def __init__(self, d_model=64, num_heads=4):
        super().__init__()
        self.self_attn = LlamaAttention(d_model, num_heads)

    def forward(self, x, attention_mask):
        cache_position = torch.arange(0, x.shape[1])
        mask = update_causal_mask(attention_mask, x, cache_position)
        return self.self_attn(x, mask)
