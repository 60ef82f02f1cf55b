"""Falcon-7B written the way Hugging Face transformers writes it (modeling_falcon as of 4.33, before the
Llama-style rotary cache and the 4-D float masks of 4.34-4.36: multi_query, parallel_attn, no alibi,
bias-free; the branch that computes the attention weights itself, the one torch 1.13 can run, as it has
no scaled_dot_product_attention).

The forms an export of the real thing carries, each kept here:
- FalconLinear: input @ weight.T (+ bias), so a 3-D MatMul on a transposed initializer;
- one query_key_value projection of H + 2 heads, viewed (B, T, H + 2, D) and split by indexing:
  fused_qkv[..., :-2, :], fused_qkv[..., [-2], :], fused_qkv[..., [-1], :] (one K/V head);
- each transposed (1, 2) and reshaped to (B * heads, T, D) for the rotary embedding;
- FalconRotaryEmbedding with its lazily built cache: when seq_len + past exceeds the cached length,
  t = torch.arange(total_length, dtype=inv_freq.dtype) (float32: an ONNX Range on Cast(Shape)),
  einsum("i,j->ij", t, inv_freq), cat((freqs, freqs), -1), cos()[None] and sin()[None], sliced
  [:, past : past + T]; q * cos + rotate_half(q) * sin (rotate_half by slices, Neg, Concat);
- the model-level bool mask of FalconModel._prepare_attn_mask: _make_causal_mask =
  triu(ones((T, T), bool), 1) with an empty past block concatenated on the left, expanded to
  (B, 1, T, past + T), OR'ed with _expand_mask = ~(attention_mask[:, None, None, :].to(bool)) expanded;
  True means hidden;
- in each layer attention_mask_float = (attention_mask * 1.0).masked_fill(attention_mask, -1e9);
- Q reshaped (B, H, T, D), K and V (B, 1, T, D): query @ key.transpose(-1, -2), /= sqrt(D), softmax of
  scores + attention_mask_float with dtype float32, @ value (one K/V head broadcast by MatMul), view
  (B, H, T, D), permute(0, 2, 1, 3), reshape (B, T, H * D), dense;
- parallel block: input_layernorm once, mlp(ln) + attention + residual; GELU (erf) MLP;
- word embeddings only (no positions, drawn N(0, 0.02) as _init_weights does), ln_f, lm_head tied to
  the word embeddings;
- with use_cache, the cache as 4.33 keeps it: past_key_values in the standard (B, 1, past, D) form viewed
  by _convert_to_rw_cache to (B * 1, past, D), past length read from axis 1 of the RW form, each layer's
  past concatenated on axis 1 before the reshape to (B, 1, past + T, D), _expand_mask with total - past
  rows, and the presents viewed back by _convert_cache_to_standard_format.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class FalconRotaryEmbedding(nn.Module):
    """The cos/sin cache is built by the first call that needs it and kept on the module: an export
    traces the building only when the cache is empty (reset_cache), as it is in a freshly loaded model."""

    def __init__(self, head_dim, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.head_dim = head_dim
        self.reset_cache()

    def reset_cache(self):
        self.seq_len_cached = -1
        self.cos_cached = None
        self.sin_cached = None

    def cos_sin(self, seq_len, past_key_values_length, device="cpu", dtype=torch.bfloat16):
        total_length = seq_len + past_key_values_length
        if total_length > self.seq_len_cached:
            self.seq_len_cached = total_length
            t = torch.arange(total_length, device=device, dtype=self.inv_freq.dtype)
            freqs = torch.einsum("i,j->ij", t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1).to(device)
            if dtype in [torch.float16, torch.bfloat16]:
                emb = emb.float()
            self.cos_cached = emb.cos()[None, :, :]
            self.sin_cached = emb.sin()[None, :, :]
            self.cos_cached = self.cos_cached.type(dtype)
            self.sin_cached = self.sin_cached.type(dtype)
        return (self.cos_cached[:, past_key_values_length: seq_len + past_key_values_length],
                self.sin_cached[:, past_key_values_length: seq_len + past_key_values_length])

    def forward(self, query, key, past_key_values_length=0):
        batch, seq_len, head_dim = query.shape
        cos, sin = self.cos_sin(seq_len, past_key_values_length, query.device, query.dtype)
        return (query * cos) + (rotate_half(query) * sin), (key * cos) + (rotate_half(key) * sin)


def _make_causal_mask(input_ids_shape, device, past_key_values_length):
    batch_size, target_length = input_ids_shape
    mask = torch.triu(torch.ones((target_length, target_length), dtype=torch.bool, device=device), diagonal=1)
    # If past_key_values_length is 0 this is an empty tensor and the concatenation is a no-op.
    past_mask = torch.zeros((target_length, past_key_values_length), dtype=torch.bool, device=device)
    mask = torch.cat([past_mask, mask], dim=-1)
    return mask[None, None, :, :].expand(batch_size, 1, target_length, target_length + past_key_values_length)


def _expand_mask(mask, past_key_values_length):
    batch_size, total_length = mask.shape
    seq_length = total_length - past_key_values_length if past_key_values_length is not None else total_length
    expanded_mask = ~(mask[:, None, None, :].to(torch.bool))
    return expanded_mask.expand(batch_size, 1, seq_length, total_length)


class FalconLinear(nn.Linear):
    def forward(self, input):
        hidden_states = input @ self.weight.T
        if self.bias is None:
            return hidden_states
        return hidden_states + self.bias


class FalconAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.hidden_size = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.maybe_rotary = FalconRotaryEmbedding(self.head_dim)
        self.num_kv_heads = 1  # multi_query
        self.query_key_value = FalconLinear(d_model, d_model + 2 * self.head_dim, bias=False)
        self.dense = FalconLinear(d_model, d_model, bias=False)
        self.attention_dropout = nn.Dropout(0.1)

    def _split_heads(self, fused_qkv):
        batch_size, seq_length, three_times_hidden_size = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads + 2, self.head_dim)
        return fused_qkv[..., :-2, :], fused_qkv[..., [-2], :], fused_qkv[..., [-1], :]

    def forward(self, hidden_states, attention_mask, layer_past=None):
        fused_qkv = self.query_key_value(hidden_states)
        num_kv_heads = self.num_kv_heads
        query_layer, key_layer, value_layer = self._split_heads(fused_qkv)
        batch_size, query_length, _, _ = query_layer.shape
        query_layer = query_layer.transpose(1, 2).reshape(batch_size * self.num_heads, query_length, self.head_dim)
        key_layer = key_layer.transpose(1, 2).reshape(batch_size * num_kv_heads, query_length, self.head_dim)
        value_layer = value_layer.transpose(1, 2).reshape(batch_size * num_kv_heads, query_length, self.head_dim)
        past_kv_length = 0 if layer_past is None else layer_past[0].shape[1]
        query_layer, key_layer = self.maybe_rotary(query_layer, key_layer, past_kv_length)
        if layer_past is not None:
            past_key, past_value = layer_past
            key_layer = torch.cat((past_key, key_layer), dim=1)
            value_layer = torch.cat((past_value, value_layer), dim=1)
        present = (key_layer, value_layer)
        attention_mask_float = (attention_mask * 1.0).masked_fill(attention_mask, float("-1e9")).to(query_layer.dtype)
        query_layer_ = query_layer.reshape(batch_size, self.num_heads, -1, self.head_dim)
        key_layer_ = key_layer.reshape(batch_size, num_kv_heads, -1, self.head_dim)
        value_layer_ = value_layer.reshape(batch_size, num_kv_heads, -1, self.head_dim)
        # alibi is None; the branch that computes the weights itself (output_attentions, or no SDPA)
        attention_scores = query_layer_ @ key_layer_.transpose(-1, -2)
        attention_scores /= math.sqrt(self.head_dim)
        attention_scores = F.softmax(attention_scores + attention_mask_float, dim=-1, dtype=hidden_states.dtype)
        attn_output = attention_scores @ value_layer_
        attn_output = attn_output.view(batch_size, self.num_heads, query_length, self.head_dim)
        attn_output = attn_output.permute(0, 2, 1, 3)
        attn_output = attn_output.reshape(batch_size, query_length, self.num_heads * self.head_dim)
        return self.dense(attn_output), present


class FalconMLP(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.dense_h_to_4h = FalconLinear(d_model, 4 * d_model, bias=False)
        self.act = nn.GELU()
        self.dense_4h_to_h = FalconLinear(4 * d_model, d_model, bias=False)

    def forward(self, x):
        return self.dense_4h_to_h(self.act(self.dense_h_to_4h(x)))


class FalconDecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(d_model, eps=1e-5)
        self.self_attention = FalconAttention(d_model, num_heads)
        self.mlp = FalconMLP(d_model)

    def forward(self, hidden_states, attention_mask, layer_past=None):
        residual = hidden_states
        attention_layernorm_out = self.input_layernorm(hidden_states)
        attention_output, present = self.self_attention(attention_layernorm_out, attention_mask, layer_past)
        mlp_layernorm_out = attention_layernorm_out  # parallel_attn
        mlp_output = self.mlp(mlp_layernorm_out)
        mlp_output += attention_output
        return mlp_output + residual, present  # dropout_add in eval mode


class FalconForCausalLM(nn.Module):
    """forward(input_ids, attention_mask) -> logits (no cache); with use_cache,
    forward(input_ids, attention_mask[, past.0.key, past.0.value, ...]) -> logits, present.0.key, ..."""

    def __init__(self, vocab, d_model, num_heads, layers, use_cache=False):
        super().__init__()
        self.use_cache = use_cache
        self.word_embeddings = nn.Embedding(vocab, d_model)
        self.h = nn.ModuleList(FalconDecoderLayer(d_model, num_heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d_model, eps=1e-5)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        with torch.no_grad():
            self.word_embeddings.weight.normal_(0.0, 0.02)  # as _init_weights: the tied logits stay O(1)
        self.lm_head.weight = self.word_embeddings.weight  # tied

    def reset_cache(self):
        for layer in self.h:
            layer.self_attention.maybe_rotary.reset_cache()

    @staticmethod
    def _prepare_attn_mask(attention_mask, input_shape, past_key_values_length):
        if input_shape[1] + past_key_values_length != attention_mask.shape[1]:
            raise ValueError("Attention mask shape should be (batch_size, seq_length + past_key_values_length)")
        combined_attention_mask = None
        _, seq_length = input_shape
        if seq_length > 1:
            combined_attention_mask = _make_causal_mask(input_shape, device=attention_mask.device,
                                                        past_key_values_length=past_key_values_length)
        expanded_attn_mask = _expand_mask(attention_mask, past_key_values_length=past_key_values_length)
        return (expanded_attn_mask if combined_attention_mask is None
                else expanded_attn_mask | combined_attention_mask)

    @staticmethod
    def _convert_to_rw_cache(past_key_value):
        batch_size, num_heads, kv_length, head_dim = past_key_value[0][0].shape
        batch_size_times_num_heads = batch_size * num_heads
        return tuple((layer_past[0].view(batch_size_times_num_heads, kv_length, head_dim),
                      layer_past[1].view(batch_size_times_num_heads, kv_length, head_dim))
                     for layer_past in past_key_value)

    @staticmethod
    def _convert_cache_to_standard_format(past_key_value, batch_size):
        batch_size_times_num_heads, kv_length, head_dim = past_key_value[0][0].shape
        num_heads = batch_size_times_num_heads // batch_size
        return tuple((layer_past[0].view(batch_size, num_heads, kv_length, head_dim),
                      layer_past[1].view(batch_size, num_heads, kv_length, head_dim))
                     for layer_past in past_key_value)

    def forward(self, input_ids, attention_mask, *past):
        batch_size, seq_length = input_ids.shape
        if past:
            past_key_values = self._convert_to_rw_cache([past[i:i + 2] for i in range(0, len(past), 2)])
        else:
            past_key_values = (None,) * len(self.h)
        hidden_states = self.word_embeddings(input_ids)
        past_key_values_length = 0
        if past_key_values[0] is not None:
            past_key_values_length = past_key_values[0][0].shape[1]  # 1: the RW form
        causal_mask = self._prepare_attn_mask(attention_mask, input_shape=(batch_size, seq_length),
                                              past_key_values_length=past_key_values_length)
        presents = ()
        for block, layer_past in zip(self.h, past_key_values):
            hidden_states, present = block(hidden_states, causal_mask, layer_past)
            presents += (present,)
        hidden_states = self.ln_f(hidden_states)
        logits = self.lm_head(hidden_states)
        if not self.use_cache:
            return logits
        standard = self._convert_cache_to_standard_format(presents, batch_size)
        return (logits, *[t for layer in standard for t in layer])
