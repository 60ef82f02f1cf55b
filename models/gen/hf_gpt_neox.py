"""GPT-NeoX (Pythia) written the way Hugging Face transformers writes it (modeling_gpt_neox, eager
attention, as 4.35 writes it: the _attn of 4.31-4.35, the rotary table indexed by position_ids as from 4.35;
4.30-4.34 gather it with torch.gather instead), with the legacy tuple cache.

The forms an export of the real thing carries, each kept here:
- one query_key_value Linear (with bias) viewed (B, T, H, 3 * D) and sliced per head into Q, K and V
  ([..., :D], [..., D:2D], [..., 2D:]), each permute(0, 2, 1, 3);
- partial rotary: rotary_ndims = int(D * rotary_pct) leading features of each head (rotary_pct 0.25: 4 of
  16); GPTNeoXRotaryEmbedding's cos_cached / sin_cached buffers (cat(freqs, freqs) of
  einsum("i,j->ij", arange(max_positions), inv_freq)) sliced [:seq_len] with seq_len = T + the past's
  length, then cos[position_ids].unsqueeze(1), q * cos + rotate_half(q) * sin (rotate_half by slices:
  cat(-x2, x1)), and cat with the pass-through features;
- the past K/V concatenated on the sequence axis (present = the cat, (B, H, past + T, D));
- _attn: q and k viewed (B * H, T, D) and (B * H, S, D); attn_scores = torch.zeros(B * H, T, S) and
  torch.baddbmm(attn_scores, q, k.transpose(1, 2), beta=1.0, alpha=torch.tensor(1.0) / norm_factor)
  (norm_factor a buffer sqrt(D); the trace takes the 0-d alpha as a constant), viewed back to (B, H, T, S);
  the causal bool tril buffer sliced bias[:, :, S - T : S, :S] (after the bias is grown if S outgrows it),
  torch.where(causal_mask, scores, torch.tensor(finfo.min)), + attention_mask (the model's
  (1 - mask[:, None, None, :]) * finfo.min), softmax, .to(value.dtype), dropout, matmul V;
- heads merged by permute + contiguous + view, dense (with bias);
- the layer with use_parallel_residual: mlp(post_attention_layernorm(x)) + attention(input_layernorm(x))
  + x; the MLP dense_h_to_4h, GELU (erf), dense_4h_to_h;
- position ids arange(past, past + T).unsqueeze(0); final_layer_norm; an untied embed_out without bias.
forward(input_ids, attention_mask, *past) -> (logits, *presents), past and presents ordered key 0,
value 0, key 1, ... (past_key_values.N.key/value and present.N.key/value in the exports).
"""
import torch
from torch import nn


class GPTNeoXRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings, base=10000):
        super().__init__()
        self.dim = dim
        self.max_position_embeddings = max_position_embeddings
        self.base = base
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2).float() / self.dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        # Build here to make `torch.jit.trace` work.
        self._set_cos_sin_cache(seq_len=max_position_embeddings)

    def _set_cos_sin_cache(self, seq_len):
        self.max_seq_len_cached = seq_len
        t = torch.arange(self.max_seq_len_cached, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, x, seq_len=None):
        # x: [bs, num_attention_heads, seq_len, head_size]
        if seq_len > self.max_seq_len_cached:
            self._set_cos_sin_cache(seq_len=seq_len)
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids, unsqueeze_dim=1):
    cos = cos[position_ids].unsqueeze(unsqueeze_dim)
    sin = sin[position_ids].unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class GPTNeoXAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_positions, rotary_pct):
        super().__init__()
        self.num_attention_heads = num_heads
        self.hidden_size = d_model
        self.head_size = d_model // num_heads
        self.rotary_ndims = int(self.head_size * rotary_pct)
        self._init_bias(max_positions)
        self.register_buffer("masked_bias", torch.tensor(-1e9), persistent=False)
        self.rotary_emb = GPTNeoXRotaryEmbedding(self.rotary_ndims, max_positions, base=10000)
        self.register_buffer(
            "norm_factor", torch.sqrt(torch.tensor(self.head_size, dtype=torch.float32)).to(torch.get_default_dtype()),
            persistent=False)
        self.query_key_value = nn.Linear(d_model, 3 * d_model)
        self.dense = nn.Linear(d_model, d_model)
        self.attention_dropout = nn.Dropout(0.0)

    def _init_bias(self, max_positions):
        self.register_buffer(
            "bias", torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions), persistent=False)

    @classmethod
    def _merge_heads(cls, tensor, num_attention_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size(0), tensor.size(1), num_attention_heads * attn_head_size)

    def _attn(self, query, key, value, attention_mask):
        # q, k, v: [bs, num_attention_heads, seq_len, attn_head_size]
        batch_size, num_attention_heads, query_length, attn_head_size = query.size()
        key_length = key.size(-2)
        query = query.view(batch_size * num_attention_heads, query_length, attn_head_size)
        key = key.view(batch_size * num_attention_heads, key_length, attn_head_size)
        attn_scores = torch.zeros(batch_size * num_attention_heads, query_length, key_length,
                                  dtype=query.dtype, device=key.device)
        attn_scores = torch.baddbmm(
            attn_scores, query, key.transpose(1, 2), beta=1.0,
            alpha=(torch.tensor(1.0, dtype=self.norm_factor.dtype, device=self.norm_factor.device) / self.norm_factor))
        attn_scores = attn_scores.view(batch_size, num_attention_heads, query_length, key_length)
        # dynamically increase the causal mask with the key length, if needed.
        if key_length > self.bias.shape[-1]:
            self._init_bias(key_length)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_scores.dtype).min
        mask_value = torch.tensor(mask_value, dtype=attn_scores.dtype).to(attn_scores.device)
        attn_scores = torch.where(causal_mask, attn_scores, mask_value)
        if attention_mask is not None:
            attn_scores = attn_scores + attention_mask
        attn_weights = nn.functional.softmax(attn_scores, dim=-1)
        attn_weights = attn_weights.to(value.dtype)
        attn_weights = self.attention_dropout(attn_weights)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states, attention_mask, position_ids, layer_past=None):
        has_layer_past = layer_past is not None
        qkv = self.query_key_value(hidden_states)
        # [batch, seq_len, (num_heads * 3 * head_size)] --> [batch, seq_len, num_heads, 3 * head_size]
        new_qkv_shape = qkv.size()[:-1] + (self.num_attention_heads, 3 * self.head_size)
        qkv = qkv.view(*new_qkv_shape)
        query = qkv[..., : self.head_size].permute(0, 2, 1, 3)
        key = qkv[..., self.head_size: 2 * self.head_size].permute(0, 2, 1, 3)
        value = qkv[..., 2 * self.head_size:].permute(0, 2, 1, 3)
        # Compute rotary embeddings on rotary_ndims
        query_rot = query[..., : self.rotary_ndims]
        query_pass = query[..., self.rotary_ndims:]
        key_rot = key[..., : self.rotary_ndims]
        key_pass = key[..., self.rotary_ndims:]
        # Compute token offset for rotary embeddings (when decoding)
        seq_len = key.shape[-2]
        if has_layer_past:
            seq_len += layer_past[0].shape[-2]
        cos, sin = self.rotary_emb(value, seq_len=seq_len)
        query, key = apply_rotary_pos_emb(query_rot, key_rot, cos, sin, position_ids)
        query = torch.cat((query, query_pass), dim=-1)
        key = torch.cat((key, key_pass), dim=-1)
        # Cache QKV values
        if has_layer_past:
            past_key = layer_past[0]
            past_value = layer_past[1]
            key = torch.cat((past_key, key), dim=-2)
            value = torch.cat((past_value, value), dim=-2)
        present = (key, value)
        attn_output = self._attn(query, key, value, attention_mask)
        attn_output = self._merge_heads(attn_output, self.num_attention_heads, self.head_size)
        return self.dense(attn_output), present


class GPTNeoXMLP(nn.Module):
    def __init__(self, d_model, intermediate):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(d_model, intermediate)
        self.dense_4h_to_h = nn.Linear(intermediate, d_model)
        self.act = nn.GELU()

    def forward(self, hidden_states):
        return self.dense_4h_to_h(self.act(self.dense_h_to_4h(hidden_states)))


class GPTNeoXLayer(nn.Module):
    def __init__(self, d_model, num_heads, max_positions, rotary_pct):
        super().__init__()
        self.use_parallel_residual = True
        self.input_layernorm = nn.LayerNorm(d_model, eps=1e-5)
        self.post_attention_layernorm = nn.LayerNorm(d_model, eps=1e-5)
        self.post_attention_dropout = nn.Dropout(0.0)
        self.post_mlp_dropout = nn.Dropout(0.0)
        self.attention = GPTNeoXAttention(d_model, num_heads, max_positions, rotary_pct)
        self.mlp = GPTNeoXMLP(d_model, 4 * d_model)

    def forward(self, hidden_states, attention_mask, position_ids, layer_past):
        attn_output, present = self.attention(self.input_layernorm(hidden_states), attention_mask, position_ids,
                                              layer_past)
        attn_output = self.post_attention_dropout(attn_output)
        # use_parallel_residual: x = x + attn(ln1(x)) + mlp(ln2(x))
        mlp_output = self.mlp(self.post_attention_layernorm(hidden_states))
        mlp_output = self.post_mlp_dropout(mlp_output)
        return mlp_output + attn_output + hidden_states, present


class GPTNeoXForCausalLM(nn.Module):
    """forward(input_ids, attention_mask, *past) -> (logits, *presents); no past: the prefill path."""

    def __init__(self, vocab, d_model, num_heads, layers, max_positions, rotary_pct):
        super().__init__()
        self.num_layers = layers
        self.embed_in = nn.Embedding(vocab, d_model)
        self.emb_dropout = nn.Dropout(0.0)
        self.layers = nn.ModuleList(
            GPTNeoXLayer(d_model, num_heads, max_positions, rotary_pct) for _ in range(layers))
        self.final_layer_norm = nn.LayerNorm(d_model, eps=1e-5)
        self.embed_out = nn.Linear(d_model, vocab, bias=False)

    def forward(self, input_ids, attention_mask, *past):
        batch_size, seq_length = input_ids.size()
        if not past:
            past_length = 0
            past_key_values = tuple([None] * self.num_layers)
        else:
            past_key_values = tuple((past[2 * i], past[2 * i + 1]) for i in range(self.num_layers))
            past_length = past_key_values[0][0].size(-2)
        position_ids = torch.arange(past_length, seq_length + past_length, dtype=torch.long)
        position_ids = position_ids.unsqueeze(0)
        dtype = self.embed_in.weight.dtype
        attention_mask = attention_mask.view(batch_size, -1)
        attention_mask = attention_mask[:, None, None, :]
        attention_mask = attention_mask.to(dtype=dtype)  # fp16 compatibility
        attention_mask = (1.0 - attention_mask) * torch.finfo(dtype).min
        hidden_states = self.emb_dropout(self.embed_in(input_ids))
        presents = []
        for layer, layer_past in zip(self.layers, past_key_values):
            hidden_states, present = layer(hidden_states, attention_mask, position_ids, layer_past)
            presents.extend(present)
        hidden_states = self.final_layer_norm(hidden_states)
        return (self.embed_out(hidden_states), *presents)
