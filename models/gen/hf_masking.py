"""LLaMA and Mistral as Hugging Face transformers writes them from 4.53 on, where every model builds
its mask through masking_utils (create_causal_mask / create_sliding_window_causal_mask, eager
attention, the index-based path that exports trace: no vmap):

- the 2-D attention_mask is cast to bool; q_offset is the past length the cache reports (the first
  layer's past key length), kv_length = past + T, kv_offset 0;
- mask functions are index predicates combined by and_masks, which starts from
  `q_idx.new_ones((), dtype=torch.bool)` and ANDs each one in: causal `kv_idx <= q_idx`, for a
  sliding window also `kv_idx > q_idx - sliding_window`, and the padding `padding_mask[batch_idx,
  kv_idx]` (advanced indexing by two broadcast index tensors);
- the indices are aranges broadcast to 4-D: batch_arange[:, None, None, None],
  head_arange (arange(1))[None, :, None, None], (arange(T) + q_offset)[None, None, :, None],
  (arange(kv_length) + kv_offset)[None, None, None, :]; the result is expanded to (B, -1, T, kv_length);
- eager_mask turns it into `torch.where(mask, tensor(0.0), finfo(dtype).min)`;
- eager_attention_forward: repeat_kv, `matmul(q, k.transpose(2, 3)) * scaling`, plus the mask sliced
  to the key length, float32 softmax, matmul with V, transpose(1, 2).contiguous().

The rest of the decoder (RMSNorm, rotary embeddings, SwiGLU, the legacy tuple cache) is hf_llama.py's.
"""
import torch
from torch import nn

import hf_llama


def sdpa_mask(batch_size, q_length, kv_length, q_offset, kv_offset, attention_mask, sliding_window=None):
    """masking_utils.sdpa_mask without vmap: a bool (B, 1, T, kv_length) mask, True where a query sees a key."""
    padding_mask = attention_mask
    batch_arange = torch.arange(batch_size)
    head_arange = torch.arange(1)
    q_arange = torch.arange(q_length) + q_offset
    kv_arange = torch.arange(kv_length) + kv_offset
    batch_idx = batch_arange[:, None, None, None]
    head_idx = head_arange[None, :, None, None]
    q_idx = q_arange[None, None, :, None]
    kv_idx = kv_arange[None, None, None, :]
    del head_idx  # no mask function of these models reads the head
    result = q_idx.new_ones((), dtype=torch.bool)
    result = result & (kv_idx <= q_idx)
    if sliding_window is not None:
        result = result & (kv_idx > q_idx - sliding_window)
    result = result & padding_mask[batch_idx, kv_idx]
    return result.expand(batch_size, -1, q_length, kv_length)


def eager_mask(mask, dtype):
    # masking_utils passes finfo.min as a Python float; the torch here exports that operand of Where as a
    # float64 constant (an invalid model), where newer exporters write it in the mask's dtype, as here.
    min_dtype = torch.tensor(torch.finfo(dtype).min, dtype=dtype)
    return torch.where(mask, torch.tensor(0.0, dtype=dtype), min_dtype)


def eager_attention_forward(query, key, value, attention_mask, scaling, groups):
    key_states = hf_llama.repeat_kv(key, groups)
    value_states = hf_llama.repeat_kv(value, groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
    attn_weights = attn_weights + causal_mask
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value_states)
    return attn_output.transpose(1, 2).contiguous()


class MaskingUtilsAttention(hf_llama.LlamaGQAttention):
    def forward(self, hidden_states, attention_mask, position_embeddings, past_key_value):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = hf_llama.apply_rotary_pos_emb(query_states, key_states, cos, sin)
        if past_key_value is not None:
            key_states = torch.cat([past_key_value[0], key_states], dim=-2)
            value_states = torch.cat([past_key_value[1], value_states], dim=-2)
        present = (key_states, value_states)
        attn_output = eager_attention_forward(query_states, key_states, value_states, attention_mask,
                                              self.head_dim ** -0.5, self.num_key_value_groups)
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.o_proj(attn_output), present


class MaskingUtilsForCausalLM(hf_llama.LlamaForCausalLM):
    """hf_llama's decoder with the 4.53+ attention and mask; sliding_window None is LLaMA, an int Mistral."""

    def __init__(self, vocab, d_model, num_heads, kv_heads, layers, intermediate, sliding_window=None):
        super().__init__(vocab, d_model, num_heads, kv_heads, layers, intermediate)
        self.sliding_window = sliding_window
        for layer in self.layers:
            layer.self_attn = MaskingUtilsAttention(d_model, num_heads, kv_heads)

    def causal_mask(self, attention_mask, inputs_embeds, cache_position, past_seen_tokens):
        q_length = inputs_embeds.shape[1]   # past_seen_tokens: the cache's get_seq_length(), its key length
        mask = sdpa_mask(inputs_embeds.shape[0], q_length, past_seen_tokens + q_length, past_seen_tokens, 0,
                         attention_mask.to(dtype=torch.bool), self.sliding_window)
        return eager_mask(mask, inputs_embeds.dtype)
