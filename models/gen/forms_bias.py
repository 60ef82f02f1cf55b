"""Attention with a positional bias added to the scores, as the model libraries write it:
MPT's ALiBi (mosaicml llm-foundry attention.py / Hugging Face modeling_mpt.py), T5's relative
position bias (Hugging Face modeling_t5 T5Attention) and BLOOM's ALiBi on heads merged into the
batch (Hugging Face modeling_bloom). Each takes x (B, T, d_model) and attention_mask (B, T), 1 for
a real token and 0 for padding. The trap modules at the end are what must not fuse as a bias."""
import math

import torch
from torch import nn


# ---------------------------------------------------------------------------------------------
# MPT (mosaicml llm-foundry): build_alibi_bias + scaled_multihead_dot_product_attention.

def gen_slopes(n_heads, alibi_bias_max=8):
    """llm-foundry gen_slopes: 1 / 2^(m * alibi_bias_max / n) over the next power of 2 heads."""
    _n_heads = 2 ** math.ceil(math.log2(n_heads))
    m = torch.arange(1, _n_heads + 1, dtype=torch.float32)
    m = m.mul(alibi_bias_max / _n_heads)
    slopes = 1.0 / torch.pow(2, m)
    if _n_heads != n_heads:
        slopes = torch.concat([slopes[1::2], slopes[::2]])[:n_heads]
    return slopes.view(1, n_heads, 1, 1)


def build_alibi_bias(n_heads, seq_len, alibi_bias_max=8, full=False):
    """llm-foundry build_alibi_bias: slopes * arange(1 - S, 1), shape (1, H, 1, S)."""
    alibi_bias = torch.arange(1 - seq_len, 1, dtype=torch.int32).view(1, 1, 1, seq_len)
    if full:
        alibi_bias = alibi_bias - torch.arange(1 - seq_len, 1, dtype=torch.int32).view(1, 1, seq_len, 1)
        alibi_bias = alibi_bias.abs().mul(-1)
    slopes = gen_slopes(n_heads, alibi_bias_max)
    alibi_bias = alibi_bias * slopes
    return alibi_bias


class MPTAttention(nn.Module):
    """llm-foundry MultiheadAttention with attn_impl='torch', ALiBi and a key padding mask.

    The model builds its attention bias once at max_seq_len (MPTModel._attn_bias, a buffer of
    shape (1, H, 1, max_seq_len)); the attention slices the last S keys off it.
    `query_axis=True` is a trap: the slopes multiply arange along the query axis (1, H, S, 1)."""

    def __init__(self, d_model, n_heads, max_seq_len, alibi_bias_max=8, query_axis=False):
        super().__init__()
        self.d_model, self.n_heads = d_model, n_heads
        self.softmax_scale = 1 / math.sqrt(d_model / n_heads)
        self.Wqkv = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.query_axis = query_axis
        bias = build_alibi_bias(n_heads, max_seq_len, alibi_bias_max)
        if query_axis:
            bias = bias.transpose(2, 3)
        self.register_buffer("attn_bias", bias, persistent=False)

    def forward(self, x, attention_mask):
        b, s_q, _ = x.shape
        qkv = self.Wqkv(x)
        query, key, value = qkv.chunk(3, dim=2)
        key_padding_mask = attention_mask.bool()
        attn_bias = self.attn_bias
        h = self.n_heads
        # rearrange(query, 'b s (h d) -> b h s d'), key -> 'b h d s'
        q = query.view(b, s_q, h, -1).permute(0, 2, 1, 3)
        k = key.view(b, s_q, h, -1).permute(0, 2, 3, 1)
        v = value.view(b, s_q, h, -1).permute(0, 2, 1, 3)
        s_k = k.size(-1)
        attn_weight = q.matmul(k) * self.softmax_scale
        if self.query_axis:
            _s_q = max(0, attn_bias.size(2) - s_q)
            attn_bias = attn_bias[:, :, _s_q:, :]
        else:
            _s_k = max(0, attn_bias.size(3) - s_k)
            attn_bias = attn_bias[:, :, :, _s_k:]
        attn_weight = attn_weight + attn_bias
        min_val = torch.finfo(q.dtype).min
        attn_weight = attn_weight.masked_fill(~key_padding_mask.view((b, 1, 1, s_k)), min_val)
        s = max(s_q, s_k)
        causal_mask = attn_weight.new_ones(s, s, dtype=torch.float32)
        causal_mask = causal_mask.tril()
        causal_mask = causal_mask.to(torch.bool)
        causal_mask = ~causal_mask
        causal_mask = causal_mask[-s_q:, -s_k:]
        attn_weight = attn_weight.masked_fill(causal_mask.view(1, 1, s_q, s_k), min_val)
        attn_weight = torch.softmax(attn_weight, dim=-1)
        out = attn_weight.matmul(v)
        out = out.permute(0, 2, 1, 3).reshape(b, s_q, self.d_model)  # 'b h s d -> b s (h d)'
        return self.out_proj(out)


# ---------------------------------------------------------------------------------------------
# MPT as Hugging Face modeling_mpt writes it: build_mpt_alibi_tensor (H, 1, max_seq_len) and the
# 4-D mask of _prepare_4d_causal_attention_mask turned to bool (< -1), one masked_fill.

def build_mpt_alibi_tensor(num_heads, sequence_length, alibi_bias_max=8):
    alibi = torch.arange(1 - sequence_length, 1, dtype=torch.int32).view(1, 1, 1, sequence_length)
    num_heads_power_of_2 = 2 ** math.ceil(math.log2(num_heads))
    base = torch.arange(1, num_heads_power_of_2 + 1, dtype=torch.int64).float()
    base = base * (alibi_bias_max / num_heads_power_of_2)
    slopes = 1.0 / torch.pow(2, base)
    slopes = slopes.view(1, num_heads_power_of_2, 1, 1)
    if num_heads_power_of_2 != num_heads:
        slopes = torch.concat([slopes[:, 1::2, ...], slopes[:, ::2, ...]], dim=1)[:, :num_heads, ...]
    alibi = alibi * slopes
    return alibi.squeeze(0)


def prepare_4d_causal_attention_mask(attention_mask, batch_size, query_length, dtype=torch.float32):
    """AttentionMaskConverter(is_causal=True).to_4d with past length 0: a causal mask of finfo.min
    (_make_causal_mask) with the inverted expanded padding mask filled in."""
    min_value = torch.finfo(dtype).min
    mask = torch.full((query_length, query_length), min_value)
    mask_cond = torch.arange(mask.size(-1))
    mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    causal_4d_mask = mask[None, None, :, :].expand(batch_size, 1, query_length, query_length)
    key_length = attention_mask.shape[-1]
    expanded_mask = attention_mask[:, None, None, :].expand(batch_size, 1, query_length, key_length).to(dtype)
    inverted_mask = 1.0 - expanded_mask
    expanded_attn_mask = inverted_mask.masked_fill(inverted_mask.to(torch.bool), min_value)
    return causal_4d_mask.masked_fill(expanded_attn_mask.bool(), min_value)


class HFMptAttention(nn.Module):
    """MptModel + MptAttention (one block, no cache): the model builds the alibi and the bool
    causal mask, the attention slices the alibi to the current lengths and adds it."""

    def __init__(self, d_model, n_heads, max_seq_len, alibi_bias_max=8):
        super().__init__()
        self.hidden_size, self.n_heads = d_model, n_heads
        self.head_dim = d_model // n_heads
        self.max_seq_len, self.alibi_bias_max = max_seq_len, alibi_bias_max
        self.softmax_scale = 1 / math.sqrt(self.hidden_size / self.n_heads)
        self.Wqkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, hidden_states, attention_mask):
        batch_size, seq_length = hidden_states.shape[:2]
        position_bias = build_mpt_alibi_tensor(self.n_heads, self.max_seq_len, self.alibi_bias_max)
        causal_mask = prepare_4d_causal_attention_mask(attention_mask, batch_size, seq_length)
        causal_mask = causal_mask < -1
        mixed_qkv = self.Wqkv(hidden_states)
        query_states, key_states, value_states = mixed_qkv.chunk(3, dim=2)
        query_states = query_states.reshape(batch_size, seq_length, self.n_heads, self.head_dim).transpose(1, 2)
        key_states = key_states.reshape(batch_size, seq_length, self.n_heads, self.head_dim).transpose(1, 2)
        value_states = value_states.reshape(batch_size, seq_length, self.n_heads, self.head_dim).transpose(1, 2)
        attention_scores = torch.matmul(query_states, key_states.transpose(-1, -2)) * self.softmax_scale
        query_length = seq_length
        key_length = key_states.shape[-2]
        position_bias_query_index = max(0, position_bias.size(1) - query_length)
        position_bias_key_index = max(0, position_bias.size(2) - key_length)
        position_bias = position_bias[:, position_bias_query_index:, position_bias_key_index:]
        attention_scores = attention_scores + position_bias
        attention_scores = attention_scores.masked_fill(causal_mask, torch.finfo(query_states.dtype).min)
        attn_weights = nn.functional.softmax(attention_scores.float(), dim=-1).to(value_states.dtype)
        context_states = torch.matmul(attn_weights, value_states)
        context_states = context_states.permute(0, 2, 1, 3).contiguous().view(batch_size, seq_length, -1)
        return self.out_proj(context_states)


# ---------------------------------------------------------------------------------------------
# T5 (Hugging Face modeling_t5): T5Attention with a relative attention bias.

class T5Attention(nn.Module):
    def __init__(self, d_model, n_heads, is_decoder, num_buckets=32, max_distance=128,
                 has_relative_attention_bias=True):
        super().__init__()
        self.is_decoder = is_decoder
        self.has_relative_attention_bias = has_relative_attention_bias
        self.n_heads = n_heads
        self.key_value_proj_dim = d_model // n_heads
        self.inner_dim = n_heads * self.key_value_proj_dim
        self.relative_attention_num_buckets = num_buckets
        self.relative_attention_max_distance = max_distance
        self.q = nn.Linear(d_model, self.inner_dim, bias=False)
        self.k = nn.Linear(d_model, self.inner_dim, bias=False)
        self.v = nn.Linear(d_model, self.inner_dim, bias=False)
        self.o = nn.Linear(self.inner_dim, d_model, bias=False)
        if has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(num_buckets, n_heads)
            with torch.no_grad():  # T5 checkpoints hold biases of a few units
                self.relative_attention_bias.weight.normal_(0.0, 2.0)

    @staticmethod
    def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        relative_buckets = 0
        if bidirectional:
            num_buckets //= 2
            relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
            relative_position = torch.abs(relative_position)
        else:
            relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        relative_position_if_large = max_exact + (
            torch.log(relative_position.float() / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).to(torch.long)
        relative_position_if_large = torch.min(
            relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
        )
        relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
        return relative_buckets

    def compute_bias(self, query_length, key_length):
        context_position = torch.arange(query_length, dtype=torch.long)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long)[None, :]
        relative_position = memory_position - context_position  # shape (query_length, key_length)
        relative_position_bucket = self._relative_position_bucket(
            relative_position,
            bidirectional=(not self.is_decoder),
            num_buckets=self.relative_attention_num_buckets,
            max_distance=self.relative_attention_max_distance,
        )
        values = self.relative_attention_bias(relative_position_bucket)  # (query_length, key_length, n_heads)
        values = values.permute([2, 0, 1]).unsqueeze(0)  # (1, n_heads, query_length, key_length)
        return values

    def forward(self, hidden_states, mask, position_bias=None):
        batch_size, seq_length = hidden_states.shape[:2]
        query_states = self.q(hidden_states).view(batch_size, -1, self.n_heads, self.key_value_proj_dim)
        query_states = query_states.transpose(1, 2)
        key_states = self.k(hidden_states).view(batch_size, -1, self.n_heads, self.key_value_proj_dim)
        key_states = key_states.transpose(1, 2)
        value_states = self.v(hidden_states).view(batch_size, -1, self.n_heads, self.key_value_proj_dim)
        value_states = value_states.transpose(1, 2)

        # compute scores, equivalent of torch.einsum("bnqd,bnkd->bnqk", query_states, key_states)
        scores = torch.matmul(query_states, key_states.transpose(3, 2))
        if position_bias is None:  # the first layer; the others are given its (masked) bias
            key_length = key_states.shape[-2]
            position_bias = self.compute_bias(seq_length, key_length)
            position_bias = position_bias[:, :, -seq_length:, :]
            if mask is not None:
                causal_mask = mask[:, :, :, : key_states.shape[-2]]
                position_bias = position_bias + causal_mask
        position_bias_masked = position_bias
        scores += position_bias_masked
        attn_weights = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous().view(batch_size, -1, self.inner_dim)
        return self.o(attn_output), position_bias


def t5_extended_attention_mask(attention_mask, is_decoder, dtype=torch.float32):
    """ModuleUtilsMixin.get_extended_attention_mask: (1 - mask) * finfo.min, with the causal
    mask of create_extended_attention_mask_for_decoder for a decoder."""
    if is_decoder:
        batch_size, seq_length = attention_mask.shape
        seq_ids = torch.arange(seq_length)
        causal_mask = seq_ids[None, None, :].repeat(batch_size, seq_length, 1) <= seq_ids[None, :, None]
        causal_mask = causal_mask.to(attention_mask.dtype)
        extended_attention_mask = causal_mask[:, None, :, :] * attention_mask[:, None, None, :]
    else:
        extended_attention_mask = attention_mask[:, None, None, :]
    extended_attention_mask = extended_attention_mask.to(dtype=dtype)
    return (1.0 - extended_attention_mask) * torch.finfo(dtype).min


class T5LayerNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class T5LayerSelfAttention(nn.Module):
    """x + SelfAttention(layer_norm(x)); only the first layer has the relative attention bias."""

    def __init__(self, d_model, n_heads, is_decoder, has_relative_attention_bias):
        super().__init__()
        self.SelfAttention = T5Attention(d_model, n_heads, is_decoder,
                                         has_relative_attention_bias=has_relative_attention_bias)
        self.layer_norm = T5LayerNorm(d_model)

    def forward(self, x, mask, position_bias=None):
        out, position_bias = self.SelfAttention(self.layer_norm(x), mask, position_bias)
        return x + out, position_bias


class T5SelfAttentionStack(nn.Module):
    """T5Stack's self-attention layers: the extended mask built once, layer 0 computes
    position_bias (with the mask added into it) and every later layer adds that same tensor."""

    def __init__(self, d_model, n_heads, is_decoder, num_layers=2):
        super().__init__()
        self.is_decoder = is_decoder
        self.block = nn.ModuleList(
            [T5LayerSelfAttention(d_model, n_heads, is_decoder, has_relative_attention_bias=(i == 0))
             for i in range(num_layers)])

    def forward(self, x, attention_mask):
        mask = t5_extended_attention_mask(attention_mask, self.is_decoder)
        position_bias = None
        for layer in self.block:
            x, position_bias = layer(x, mask, position_bias)
        return x


# ---------------------------------------------------------------------------------------------
# BLOOM (Hugging Face modeling_bloom): build_alibi_tensor + baddbmm on (B*H, T, D).

def build_alibi_tensor(attention_mask, num_heads, dtype=torch.float32):
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


def bloom_causal_and_padding_mask(attention_mask, query_length):
    """_make_causal_mask | _expand_mask of BloomModel._prepare_attn_mask: True hides a key."""
    batch_size, key_length = attention_mask.shape
    mask = torch.ones((query_length, key_length), dtype=torch.bool).triu_(1)
    causal = mask[None, None, :, :].expand(batch_size, 1, query_length, key_length)
    padding = ~(attention_mask[:, None, None, :].to(torch.bool))
    padding = padding.expand(batch_size, 1, query_length, key_length)
    return causal | padding


class BloomAttention(nn.Module):
    def __init__(self, hidden_size, n_head):
        super().__init__()
        self.hidden_size, self.num_heads = hidden_size, n_head
        self.head_dim = hidden_size // n_head
        self.inv_norm_factor = 1.0 / math.sqrt(self.head_dim)
        self.beta = 1.0
        self.query_key_value = nn.Linear(hidden_size, 3 * hidden_size, bias=True)
        self.dense = nn.Linear(hidden_size, hidden_size)

    def _split_heads(self, fused_qkv):
        batch_size, seq_length, three_times_hidden_size = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads, 3, self.head_dim)
        return fused_qkv[..., 0, :], fused_qkv[..., 1, :], fused_qkv[..., 2, :]

    def _merge_heads(self, x):
        batch_size_and_num_heads, seq_length, _ = x.shape
        batch_size = batch_size_and_num_heads // self.num_heads
        x = x.view(batch_size, self.num_heads, seq_length, self.head_dim)
        x = x.permute(0, 2, 1, 3)
        return x.reshape(batch_size, seq_length, self.num_heads * self.head_dim)

    def forward(self, hidden_states, attention_mask):
        fused_qkv = self.query_key_value(hidden_states)
        (query_layer, key_layer, value_layer) = self._split_heads(fused_qkv)
        batch_size, q_length, _, _ = query_layer.shape
        alibi = build_alibi_tensor(attention_mask, self.num_heads, hidden_states.dtype)
        causal_mask = bloom_causal_and_padding_mask(attention_mask, q_length)
        query_layer = query_layer.transpose(1, 2).reshape(batch_size * self.num_heads, q_length, self.head_dim)
        key_layer = key_layer.permute(0, 2, 3, 1).reshape(batch_size * self.num_heads, self.head_dim, q_length)
        value_layer = value_layer.transpose(1, 2).reshape(batch_size * self.num_heads, q_length, self.head_dim)
        kv_length = key_layer.shape[-1]
        matmul_result = alibi.baddbmm(batch1=query_layer, batch2=key_layer, beta=self.beta,
                                      alpha=self.inv_norm_factor)
        attention_scores = matmul_result.view(batch_size, self.num_heads, q_length, kv_length)
        attn_weights = torch.masked_fill(attention_scores, causal_mask,
                                         torch.finfo(attention_scores.dtype).min)
        attention_probs = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32)
        attention_probs_reshaped = attention_probs.view(batch_size * self.num_heads, q_length, kv_length)
        context_layer = torch.bmm(attention_probs_reshaped, value_layer)
        context_layer = self._merge_heads(context_layer)
        return self.dense(context_layer)


# ---------------------------------------------------------------------------------------------
# Traps: a "bias" that must not be read as one.

def trap_heads(attn, x):
    """The traps' Q (B, H, T, D), Kᵀ (B, H, D, T) and V (B, H, T, D), split from MPT's fused Wqkv."""
    b, s_q, _ = x.shape
    query, key, value = attn.Wqkv(x).chunk(3, dim=2)
    h = attn.n_heads
    return (query.view(b, s_q, h, -1).permute(0, 2, 1, 3), key.view(b, s_q, h, -1).permute(0, 2, 3, 1),
            value.view(b, s_q, h, -1).permute(0, 2, 1, 3))


class ScoreDependentBias(MPTAttention):
    """The bias is computed from the scores themselves (a per-row shift by the row mean):
    scores + mean(scores) is not scores plus a tensor the fused op could be given."""

    def forward(self, x, attention_mask=None):
        b, s_q, _ = x.shape
        q, k, v = trap_heads(self, x)
        attn_weight = q.matmul(k) * self.softmax_scale
        attn_weight = attn_weight + attn_weight.mean(dim=-2, keepdim=True)
        causal = torch.ones(s_q, s_q, dtype=torch.bool).triu(1)
        attn_weight = attn_weight.masked_fill(causal.view(1, 1, s_q, s_q), torch.finfo(q.dtype).min)
        out = torch.softmax(attn_weight, dim=-1).matmul(v)
        return self.out_proj(out.permute(0, 2, 1, 3).reshape(b, s_q, self.d_model))


class MultipliedBias(MPTAttention):
    """The ALiBi tensor multiplies the scores instead of being added to them."""

    def forward(self, x, attention_mask=None):
        b, s_q, _ = x.shape
        q, k, v = trap_heads(self, x)
        attn_weight = q.matmul(k) * self.softmax_scale
        attn_bias = self.attn_bias[:, :, :, max(0, self.attn_bias.size(3) - s_q):]
        attn_weight = attn_weight * (1.0 - attn_bias)
        causal = torch.ones(s_q, s_q, dtype=torch.bool).triu(1)
        attn_weight = attn_weight.masked_fill(causal.view(1, 1, s_q, s_q), torch.finfo(q.dtype).min)
        out = torch.softmax(attn_weight, dim=-1).matmul(v)
        return self.out_proj(out.permute(0, 2, 1, 3).reshape(b, s_q, self.d_model))
