"""Phi (phi-2) written the way Hugging Face transformers writes it (modeling_phi, eager attention, versions
4.37-4.38: dense q/k/v projections, the DynamicCache of cache_utils built from the legacy tuple and handed
back as one, the 4-D mask of _prepare_4d_causal_attention_mask).

The forms an export of the real thing carries, each kept here:
- q_proj, k_proj, v_proj and dense Linear layers with bias; heads split by view + transpose(1, 2);
- DynamicCache.from_legacy_cache(past): update() per layer concatenates the cached K/V with the new ones
  on the sequence axis (cat([cache, new], -2)); get_usable_length() reads the past's length (the model's
  past_key_values_length, and each layer's kv_seq_len = T + past); to_legacy_cache() gives the presents;
- partial rotary: rotary_emb.dim = int(partial_rotary_factor * D) leading features of each head (phi-2's
  0.4: 6 of 16); PhiRotaryEmbedding (Mistral's): cos_cached / sin_cached buffers of cat(freqs, freqs)
  (torch.outer(arange(max_positions), inv_freq)), cos_cached[:seq_len].to(dtype=x.dtype) with seq_len =
  kv_seq_len; apply_rotary_pos_emb: cos[position_ids].unsqueeze(1), q * cos + rotate_half(q) * sin; then
  cat with the pass-through features, before the cache update;
- scores torch.matmul(query_states.to(torch.float32), key_states.to(torch.float32).transpose(2, 3)) /
  math.sqrt(head_dim), the upcast Phi-2 needs, on the key the cache update returned: on float32 tensors
  .to(float32) returns the tensor itself, which the trace records as a Cast (float32 to float32) and then
  reads in its place, so each present.N.key is written as that Cast of the cache's Concat (the values,
  never cast, are the Concat itself);
- + the 4-D mask of _prepare_4d_causal_attention_mask (AttentionMaskConverter(is_causal=True).to_4d):
  _make_causal_mask: full((T, T), finfo.min), masked_fill_(arange < (arange + 1).view(T, 1), 0),
  .to(dtype), zeros (T, past) concatenated on the left, expanded to (B, 1, T, past + T); _expand_mask of
  the 2-D attention_mask: 1 - mask[:, None, None, :].expand(B, 1, T, S).to(dtype),
  masked_fill(inverted.to(bool), finfo.min), .to(device); then causal.masked_fill(expanded.bool(),
  finfo.min);
- softmax(dim=-1, dtype=torch.float32) (a Cast before the Softmax), .to(value_states.dtype), dropout,
  matmul V; transpose(1, 2) + contiguous + reshape, dense;
- the decoder layer is parallel: one input_layernorm, attn(x) + resid_dropout(mlp(x)) + residual; the MLP
  fc1, gelu_new, fc2;
- position ids arange(past, past + T).unsqueeze(0); final_layernorm; an untied lm_head with a bias, the
  logits .float().
forward(input_ids, attention_mask, *past) -> (logits, *presents), past and presents ordered key 0,
value 0, key 1, ... (past_key_values.N.key/value and present.N.key/value in the exports).
"""
import math

import torch
from torch import nn

import forms_merged
from hf_gpt2 import gelu_new
from hf_gpt_neox import apply_rotary_pos_emb
from hf_llama import repeat_kv


class DynamicCache:
    """cache_utils.DynamicCache (4.36-4.38), the part a decoder handed a legacy tuple runs."""

    def __init__(self):
        self.key_cache = []
        self.value_cache = []
        self.seen_tokens = 0

    def update(self, key_states, value_states, layer_idx, cache_kwargs=None):
        if layer_idx == 0:
            self.seen_tokens += key_states.shape[-2]
        if len(self.key_cache) <= layer_idx:
            self.key_cache.append(key_states)
            self.value_cache.append(value_states)
        else:
            self.key_cache[layer_idx] = torch.cat([self.key_cache[layer_idx], key_states], dim=-2)
            self.value_cache[layer_idx] = torch.cat([self.value_cache[layer_idx], value_states], dim=-2)
        return self.key_cache[layer_idx], self.value_cache[layer_idx]

    def get_seq_length(self, layer_idx=0):
        if len(self.key_cache) <= layer_idx:
            return 0
        return self.key_cache[layer_idx].shape[-2]

    def get_max_length(self):
        return None

    def get_usable_length(self, new_seq_length, layer_idx=0):
        max_length = self.get_max_length()
        previous_seq_length = self.get_seq_length(layer_idx)
        if max_length is not None and previous_seq_length + new_seq_length > max_length:
            return max_length - new_seq_length
        return previous_seq_length

    def to_legacy_cache(self):
        legacy_cache = ()
        for layer_idx in range(len(self.key_cache)):
            legacy_cache += ((self.key_cache[layer_idx], self.value_cache[layer_idx]),)
        return legacy_cache

    @classmethod
    def from_legacy_cache(cls, past_key_values=None):
        cache = cls()
        if past_key_values is not None:
            for layer_idx in range(len(past_key_values)):
                key_states, value_states = past_key_values[layer_idx]
                cache.update(key_states, value_states, layer_idx)
        return cache


def prepare_4d_causal_attention_mask(attention_mask, input_shape, inputs_embeds, past_key_values_length):
    """modeling_attn_mask_utils._prepare_4d_causal_attention_mask (4.36-4.38) on a 2-D attention_mask:
    AttentionMaskConverter(is_causal=True).to_4d, whose _make_causal_mask (without a sliding window) and
    _expand_mask are OPT's and BART's (forms_merged)."""
    key_value_length = input_shape[-1] + past_key_values_length
    query_length, dtype = input_shape[-1], inputs_embeds.dtype
    input_shape = (attention_mask.shape[0], query_length)
    causal_4d_mask = None
    if input_shape[-1] > 1:
        past = key_value_length - query_length
        causal_4d_mask = forms_merged.make_causal_mask(input_shape, dtype, past_key_values_length=past)
    expanded_attn_mask = forms_merged.expand_mask(attention_mask, dtype, tgt_len=input_shape[-1]).to(
        attention_mask.device)
    if causal_4d_mask is not None:
        expanded_attn_mask = causal_4d_mask.masked_fill(expanded_attn_mask.bool(), torch.finfo(dtype).min)
    return expanded_attn_mask


class PhiRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings, base=10000):
        super().__init__()
        self.dim = dim
        self.max_position_embeddings = max_position_embeddings
        self.base = base
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2).float() / self.dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        # Build here to make `torch.jit.trace` work.
        self._set_cos_sin_cache(max_position_embeddings, torch.get_default_dtype())

    def _set_cos_sin_cache(self, seq_len, dtype):
        self.max_seq_len_cached = seq_len
        t = torch.arange(self.max_seq_len_cached, dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos().to(dtype), persistent=False)
        self.register_buffer("sin_cached", emb.sin().to(dtype), persistent=False)

    def forward(self, x, seq_len=None):
        # x: [bs, num_attention_heads, seq_len, head_size]
        if seq_len > self.max_seq_len_cached:
            self._set_cos_sin_cache(seq_len, x.dtype)
        return self.cos_cached[:seq_len].to(dtype=x.dtype), self.sin_cached[:seq_len].to(dtype=x.dtype)


class PhiAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_positions, partial_rotary_factor, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.attention_dropout = 0.0
        self.hidden_size = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.num_key_value_heads = num_heads
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.partial_rotary_factor = partial_rotary_factor
        self.q_proj = nn.Linear(d_model, self.num_heads * self.head_dim, bias=True)
        self.k_proj = nn.Linear(d_model, self.num_key_value_heads * self.head_dim, bias=True)
        self.v_proj = nn.Linear(d_model, self.num_key_value_heads * self.head_dim, bias=True)
        self.dense = nn.Linear(self.num_heads * self.head_dim, d_model, bias=True)
        self.rotary_emb = PhiRotaryEmbedding(int(self.partial_rotary_factor * self.head_dim),
                                             max_position_embeddings=max_positions, base=10000)

    def forward(self, hidden_states, attention_mask, position_ids, past_key_value):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states)
        key_states = self.k_proj(hidden_states)
        value_states = self.v_proj(hidden_states)
        query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = key_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value_states = value_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        kv_seq_len = key_states.shape[-2]
        if past_key_value is not None:
            kv_seq_len += past_key_value.get_usable_length(kv_seq_len, self.layer_idx)
        cos, sin = self.rotary_emb(value_states, seq_len=kv_seq_len)
        # Partial rotary embedding
        query_rot, query_pass = (query_states[..., : self.rotary_emb.dim], query_states[..., self.rotary_emb.dim:])
        key_rot, key_pass = (key_states[..., : self.rotary_emb.dim], key_states[..., self.rotary_emb.dim:])
        query_rot, key_rot = apply_rotary_pos_emb(query_rot, key_rot, cos, sin, position_ids)
        query_states = torch.cat((query_rot, query_pass), dim=-1)
        key_states = torch.cat((key_rot, key_pass), dim=-1)
        if past_key_value is not None:
            cache_kwargs = {"sin": sin, "cos": cos, "partial_rotation_size": self.rotary_emb.dim}
            key_states, value_states = past_key_value.update(key_states, value_states, self.layer_idx, cache_kwargs)
        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)
        # Queries and keys upcast to fp32 is required by Phi-2 to avoid overflow
        attn_weights = torch.matmul(
            query_states.to(torch.float32), key_states.to(torch.float32).transpose(2, 3)) / math.sqrt(self.head_dim)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        # upcast attention to fp32
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(value_states.dtype)
        attn_weights = nn.functional.dropout(attn_weights, p=self.attention_dropout, training=self.training)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)
        return self.dense(attn_output)


class PhiMLP(nn.Module):
    def __init__(self, d_model, intermediate):
        super().__init__()
        self.fc1 = nn.Linear(d_model, intermediate)
        self.fc2 = nn.Linear(intermediate, d_model)

    def forward(self, hidden_states):
        return self.fc2(gelu_new(self.fc1(hidden_states)))


class PhiDecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, max_positions, partial_rotary_factor, layer_idx):
        super().__init__()
        self.self_attn = PhiAttention(d_model, num_heads, max_positions, partial_rotary_factor, layer_idx)
        self.mlp = PhiMLP(d_model, 4 * d_model)
        self.input_layernorm = nn.LayerNorm(d_model, eps=1e-5)
        self.resid_dropout = nn.Dropout(0.0)

    def forward(self, hidden_states, attention_mask, position_ids, past_key_value):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        attn_outputs = self.self_attn(hidden_states, attention_mask, position_ids, past_key_value)
        attn_outputs = self.resid_dropout(attn_outputs)
        feed_forward_hidden_states = self.resid_dropout(self.mlp(hidden_states))
        return attn_outputs + feed_forward_hidden_states + residual


class PhiForCausalLM(nn.Module):
    """forward(input_ids, attention_mask, *past) -> (logits, *presents); no past: the prefill path (an
    empty DynamicCache)."""

    def __init__(self, vocab, d_model, num_heads, layers, max_positions, partial_rotary_factor):
        super().__init__()
        self.num_layers = layers
        self.embed_tokens = nn.Embedding(vocab, d_model)
        self.embed_dropout = nn.Dropout(0.0)
        self.layers = nn.ModuleList(
            PhiDecoderLayer(d_model, num_heads, max_positions, partial_rotary_factor, i) for i in range(layers))
        self.final_layernorm = nn.LayerNorm(d_model, eps=1e-5)
        self.lm_head = nn.Linear(d_model, vocab, bias=True)

    def forward(self, input_ids, attention_mask, *past):
        batch_size, seq_length = input_ids.shape[:2]
        legacy = tuple((past[2 * i], past[2 * i + 1]) for i in range(self.num_layers)) if past else None
        past_key_values = DynamicCache.from_legacy_cache(legacy)
        past_key_values_length = past_key_values.get_usable_length(seq_length)
        position_ids = torch.arange(past_key_values_length, seq_length + past_key_values_length, dtype=torch.long)
        position_ids = position_ids.unsqueeze(0)
        inputs_embeds = self.embed_tokens(input_ids)
        inputs_embeds = self.embed_dropout(inputs_embeds)
        attention_mask = prepare_4d_causal_attention_mask(attention_mask, (batch_size, seq_length), inputs_embeds,
                                                          past_key_values_length)
        hidden_states = inputs_embeds
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, attention_mask, position_ids, past_key_values)
        hidden_states = self.final_layernorm(hidden_states)
        presents = [t for layer in past_key_values.to_legacy_cache() for t in layer]
        logits = self.lm_head(hidden_states)
        return (logits.float(), *presents)
