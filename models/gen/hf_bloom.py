"""BLOOM written the way Hugging Face transformers writes it (modeling_bloom 4.30-4.36, eager), with its
cache returned (use_cache=True): the prefill graph a generation export has, and, given the past keys and
values, the decode graph (the merged past concatenated before the new keys and values, as BLOOM's
layer_past: keys on axis 2, values on axis 1; the results are the presents).

The forms an export of the real thing carries, each kept here:
- word embeddings, then word_embeddings_layernorm; no position embeddings: ALiBi instead, built from the
  attention_mask by build_alibi_tensor (slopes (H, 1) times ((cumsum(mask) - 1) * mask)[:, None, :],
  reshaped to (B * H, 1, S));
- the bool mask of _prepare_attn_mask: _make_causal_mask (torch.empty then slice assignment, as BLOOM
  writes it for ONNX) OR _expand_mask (~mask[:, None, None, :] expanded);
- one query_key_value Linear viewed (B, T, H, 3, D) and split by indexing; heads merged into the batch:
  q (B * H, T, D), k permuted (0, 2, 3, 1) to (B * H, D, T), v (B * H, T, D);
- presents: the merged k and v themselves, returned as graph outputs;
- alibi.baddbmm(q, k, beta=1, alpha=1/sqrt(D)) viewed (B, H, T, S), masked_fill(mask, finfo.min),
  softmax in float32, viewed (B * H, T, S), bmm with v, _merge_heads, dense; dropout_add residuals;
- the tanh GELU of bloom_gelu, LayerNorm eps 1e-5, lm_head tied to the word embeddings, drawn N(0, 0.02)
  as _init_weights does.
"""
import torch
import torch.nn.functional as F
from torch import nn

import forms_bias


def make_causal_mask(input_ids_shape, past_key_values_length):
    batch_size, target_length = input_ids_shape
    mask = torch.empty((target_length, target_length + past_key_values_length), dtype=torch.bool)
    seq_ids = torch.arange(target_length)
    mask[:, past_key_values_length:] = seq_ids[:, None] < seq_ids[None, :]
    if past_key_values_length > 0:
        mask[:, :past_key_values_length] = False
    return mask[None, None, :, :].expand(batch_size, 1, target_length, target_length + past_key_values_length)


def expand_mask(mask, tgt_length):
    batch_size, src_length = mask.shape
    expanded_mask = ~(mask[:, None, None, :].to(torch.bool))
    return expanded_mask.expand(batch_size, 1, tgt_length, src_length)


def bloom_gelu(x):
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class BloomAttention(forms_bias.BloomAttention):
    """The attention of forms_bias (its projections and head split and merge), given the model's ALiBi
    and mask, returning the merged keys and values as its cache."""

    def forward(self, hidden_states, residual, alibi, attention_mask, layer_past=None):
        fused_qkv = self.query_key_value(hidden_states)
        (query_layer, key_layer, value_layer) = self._split_heads(fused_qkv)
        batch_size, q_length, _, _ = query_layer.shape
        query_layer = query_layer.transpose(1, 2).reshape(batch_size * self.num_heads, q_length, self.head_dim)
        key_layer = key_layer.permute(0, 2, 3, 1).reshape(batch_size * self.num_heads, self.head_dim, q_length)
        value_layer = value_layer.transpose(1, 2).reshape(batch_size * self.num_heads, q_length, self.head_dim)
        if layer_past is not None:
            past_key, past_value = layer_past
            key_layer = torch.cat((past_key, key_layer), dim=2)
            value_layer = torch.cat((past_value, value_layer), dim=1)
        _, _, kv_length = key_layer.shape
        present = (key_layer, value_layer)
        matmul_result = alibi.baddbmm(batch1=query_layer, batch2=key_layer, beta=self.beta,
                                      alpha=self.inv_norm_factor)
        attention_scores = matmul_result.view(batch_size, self.num_heads, q_length, kv_length)
        input_dtype = attention_scores.dtype
        attn_weights = torch.masked_fill(attention_scores, attention_mask, torch.finfo(attention_scores.dtype).min)
        attention_probs = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(input_dtype)
        attention_probs_reshaped = attention_probs.view(batch_size * self.num_heads, q_length, kv_length)
        context_layer = torch.bmm(attention_probs_reshaped, value_layer)
        context_layer = self._merge_heads(context_layer)
        return residual + self.dense(context_layer), present


class BloomBlock(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden_size, eps=1e-5)
        self.self_attention = BloomAttention(hidden_size, num_heads)
        self.post_attention_layernorm = nn.LayerNorm(hidden_size, eps=1e-5)
        self.dense_h_to_4h = nn.Linear(hidden_size, 4 * hidden_size)
        self.dense_4h_to_h = nn.Linear(4 * hidden_size, hidden_size)

    def forward(self, hidden_states, alibi, attention_mask, layer_past=None):
        layernorm_output = self.input_layernorm(hidden_states)
        attention_output, present = self.self_attention(layernorm_output, hidden_states, alibi, attention_mask,
                                                        layer_past)
        layernorm_output = self.post_attention_layernorm(attention_output)
        mlp = self.dense_4h_to_h(bloom_gelu(self.dense_h_to_4h(layernorm_output)))
        return attention_output + mlp, present


class BloomForCausalLM(nn.Module):
    """forward(input_ids, attention_mask[, past.0.key, past.0.value, ...]) -> logits, present.0.key,
    present.0.value, ..."""

    def __init__(self, vocab, hidden_size, num_heads, layers):
        super().__init__()
        self.num_heads = num_heads
        self.word_embeddings = nn.Embedding(vocab, hidden_size)
        self.word_embeddings_layernorm = nn.LayerNorm(hidden_size, eps=1e-5)
        self.h = nn.ModuleList(BloomBlock(hidden_size, num_heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden_size, eps=1e-5)
        self.lm_head = nn.Linear(hidden_size, vocab, bias=False)
        self.lm_head.weight = self.word_embeddings.weight
        with torch.no_grad():  # as _init_weights: the tied logits stay O(1)
            self.word_embeddings.weight.normal_(0.0, 0.02)

    def forward(self, input_ids, attention_mask, *past_key_values):
        batch_size, seq_length = input_ids.shape
        past = [tuple(past_key_values[i:i + 2]) for i in range(0, len(past_key_values), 2)] or [None] * len(self.h)
        past_length = past[0][0].shape[2] if past[0] is not None else 0
        hidden_states = self.word_embeddings_layernorm(self.word_embeddings(input_ids))
        alibi = forms_bias.build_alibi_tensor(attention_mask, self.num_heads, dtype=hidden_states.dtype)
        causal_mask = (make_causal_mask((batch_size, seq_length), past_length)
                       | expand_mask(attention_mask, seq_length))
        presents = []
        for block, layer_past in zip(self.h, past):
            hidden_states, present = block(hidden_states, alibi, causal_mask, layer_past)
            presents += list(present)
        return (self.lm_head(self.ln_f(hidden_states)), *presents)
