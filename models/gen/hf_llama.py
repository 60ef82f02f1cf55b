"""LLaMA as Hugging Face transformers writes it (modeling_llama, versions 4.38-4.47, eager
attention): one attention block with the 4-D mask built for it (LlamaMaskedAttention, no cache), and
the whole decoder with a past (LlamaForCausalLM).

The forms an export of the real thing carries, each kept here:
- `_update_causal_mask`: torch.full((T, T), finfo.min).triu(1), multiplied in place by
  arange(T) > cache_position.reshape(-1, 1), expanded to (B, 1, T, T) and cloned; then the
  padding from the 2-D attention_mask is written into it with a slice assignment,
  causal_mask[:, :, :, :n] = causal_mask[:, :, :, :n].masked_fill(padding_mask, finfo.min),
  which torch.onnx.export writes as ScatterND into the cloned mask;
- q/k/v/o projections as bias-free Linear layers, heads split by view + transpose(1, 2);
- scores = matmul(q, k.transpose(2, 3)) / sqrt(head_dim), plus the mask sliced to the key length;
- softmax in float32, matmul with V, heads merged by transpose(1, 2) + contiguous + reshape.
Rotary embeddings and the rest of the decoder layer are left out there: the mask is what that model
tests (LlamaMaskedAttention).

LlamaForCausalLM is the whole decoder in the same eager form, with the legacy tuple cache:
- embed_tokens; per layer input_layernorm, self-attention, residual, post_attention_layernorm, the
  SwiGLU MLP down_proj(silu(gate_proj(x)) * up_proj(x)), residual; the final norm; an untied lm_head;
- LlamaRMSNorm: to(float32), variance = pow(2).mean(-1, keepdim=True), x * rsqrt(variance + eps),
  weight * x.to(input dtype);
- cache_position = arange(past, past + T), position_ids = cache_position.unsqueeze(0), past read
  from the first layer's past key length;
- LlamaRotaryEmbedding: an inv_freq buffer 1 / theta^(arange(0, D, 2) / D), freqs =
  inv_freq[None, :, None].expand(B, -1, 1) @ position_ids[:, None, :].float(), transposed,
  cat((freqs, freqs), -1), cos() and sin() times the attention scaling (1.0 for the default rope);
  computed once in the model and handed to every layer, as the later versions of that range do;
- apply_rotary_pos_emb: q * cos + rotate_half(q) * sin with cos/sin unsqueezed on the head axis,
  rotate_half = cat((-x[..., D/2:], x[..., :D/2]), -1) by slicing;
- K/V heads fewer than query heads (GQA): past K/V concatenated on the sequence axis first (the
  present is the un-repeated cat), then repeat_kv: x[:, :, None].expand(B, KV, n_rep, S, D)
  .reshape(B, KV * n_rep, S, D);
- the mask of update_causal_mask above, sliced to the key length in each layer.
forward(input_ids, attention_mask, *past) -> (logits, *presents), past and presents ordered
key 0, value 0, key 1, ... (past_key_values.N.key/value and present.N.key/value in the exports).
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


def eager_attention(query_states, key_states, value_states, attention_mask, head_dim):
    """HF's eager attention: scores, the 4-D mask sliced to the key length, float32 softmax, heads merged."""
    bsz, _, q_len, _ = query_states.shape
    attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(head_dim)
    causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
    attn_weights = attn_weights + causal_mask
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output.reshape(bsz, q_len, -1)


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
        attn_output = eager_attention(query_states, key_states, value_states, attention_mask, self.head_dim)
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


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, head_dim, theta):
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.attention_scaling = 1.0

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        with torch.autocast(device_type="cpu", enabled=False):
            freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos = emb.cos()
            sin = emb.sin()
        cos = cos * self.attention_scaling
        sin = sin * self.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def repeat_kv(hidden_states, n_rep):
    """(B, KV, S, D) -> (B, KV * n_rep, S, D), each K/V head repeated n_rep times in place."""
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class LlamaGQAttention(nn.Module):
    """Self-attention with rotary embeddings, grouped K/V heads and an optional past (K, V)."""

    def __init__(self, d_model, num_heads, kv_heads):
        super().__init__()
        self.num_heads = num_heads
        self.num_key_value_heads = kv_heads
        self.num_key_value_groups = num_heads // kv_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(d_model, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(d_model, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, d_model, bias=False)

    def forward(self, hidden_states, attention_mask, position_embeddings, past_key_value):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states)
        key_states = self.k_proj(hidden_states)
        value_states = self.v_proj(hidden_states)
        query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = key_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value_states = value_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
        if past_key_value is not None:   # the legacy cache's update: cat on the sequence axis
            key_states = torch.cat([past_key_value[0], key_states], dim=-2)
            value_states = torch.cat([past_key_value[1], value_states], dim=-2)
        present = (key_states, value_states)
        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)
        attn_output = eager_attention(query_states, key_states, value_states, attention_mask, self.head_dim)
        return self.o_proj(attn_output), present


class LlamaMLP(nn.Module):
    def __init__(self, d_model, intermediate):
        super().__init__()
        self.gate_proj = nn.Linear(d_model, intermediate, bias=False)
        self.up_proj = nn.Linear(d_model, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, d_model, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, kv_heads, intermediate, eps):
        super().__init__()
        self.self_attn = LlamaGQAttention(d_model, num_heads, kv_heads)
        self.mlp = LlamaMLP(d_model, intermediate)
        self.input_layernorm = LlamaRMSNorm(d_model, eps)
        self.post_attention_layernorm = LlamaRMSNorm(d_model, eps)

    def forward(self, hidden_states, attention_mask, position_embeddings, past_key_value):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states, present = self.self_attn(hidden_states, attention_mask, position_embeddings, past_key_value)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states, present


class LlamaForCausalLM(nn.Module):
    """forward(input_ids, attention_mask, *past) -> (logits, *presents). Weights are torch's
    defaults (Embedding N(0, 1), Linear uniform, norms ones); the caller may re-initialise them."""

    def __init__(self, vocab=97, d_model=64, num_heads=4, kv_heads=2, layers=2, intermediate=176,
                 theta=10000.0, eps=1e-5):
        super().__init__()
        self.layers_count = layers
        self.embed_tokens = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList(
            LlamaDecoderLayer(d_model, num_heads, kv_heads, intermediate, eps) for _ in range(layers))
        self.norm = LlamaRMSNorm(d_model, eps)
        self.rotary_emb = LlamaRotaryEmbedding(d_model // num_heads, theta)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)

    def causal_mask(self, attention_mask, inputs_embeds, cache_position, past_seen_tokens):
        """The 4-D additive mask every layer reads (a subclass may build it another library's way)."""
        return update_causal_mask(attention_mask, inputs_embeds, cache_position)

    def forward(self, input_ids, attention_mask, *past):
        past_key_values = [None] * self.layers_count if not past else [
            (past[2 * i], past[2 * i + 1]) for i in range(self.layers_count)]
        inputs_embeds = self.embed_tokens(input_ids)
        past_seen_tokens = 0 if past_key_values[0] is None else past_key_values[0][0].shape[-2]
        cache_position = torch.arange(past_seen_tokens, past_seen_tokens + inputs_embeds.shape[1])
        position_ids = cache_position.unsqueeze(0)
        causal_mask = self.causal_mask(attention_mask, inputs_embeds, cache_position, past_seen_tokens)
        hidden_states = inputs_embeds
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        presents = []
        for decoder_layer, layer_past in zip(self.layers, past_key_values):
            hidden_states, present = decoder_layer(hidden_states, causal_mask, position_embeddings, layer_past)
            presents.extend(present)
        hidden_states = self.norm(hidden_states)
        logits = self.lm_head(hidden_states).float()
        return (logits, *presents)
