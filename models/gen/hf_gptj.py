"""GPT-J written the way Hugging Face transformers writes it (modeling_gptj, eager attention, versions
4.30-4.40, the torch.jit.is_tracing() branch).

The forms an export of the real thing carries, each kept here:
- q/k/v/out_proj bias-free Linear layers; Q and K split into heads by view only ((B, T, H, D), for the
  rotary embedding), V by view + permute(0, 2, 1, 3);
- the rotary embedding on the first rotary_dim features of each head: a sinusoid table
  cat(sin, cos) of (max_positions, rotary_dim) kept as a plain attribute (not a buffer),
  embed_positions.repeat(B_pos, 1, 1), gathered by position_ids.unsqueeze(-1).repeat(1, 1, rotary_dim),
  split into sin and cos, each sin[:, :, None, :] repeat_interleave'd by 2 on the last axis (the
  "duplicate_interleave" of older versions), and rotate_every_two(x) = stack((-x[..., 1::2],
  x[..., ::2]), -1).flatten(-2); then cat with the pass-through features and permute(0, 2, 1, 3);
- _attn in float32: the causal bool tril buffer sliced bias[:, :, k-q:k, :k],
  torch.where(causal_mask, w, torch.tensor(finfo.min)) BEFORE the scaling, then w / self.scale_attn (a
  0-d tensor sqrt(head_dim)), then + attention_mask (the model's (1 - mask) * finfo.min); so a
  causally hidden key scores finfo.min / sqrt(D) and a padded key about finfo.min;
- softmax, matmul with V, heads merged by permute + contiguous + view, out_proj;
- the block is parallel: ln_1 once, attn(ln_1(x)) + mlp(ln_1(x)) + x; gelu_new MLP;
- position ids arange(past, past + T).unsqueeze(0); an untied lm_head with a bias; logits to float32.
"""
import torch
from torch import nn

from hf_gpt2 import gelu_new


def create_sinusoidal_positions(num_pos, dim):
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2) / dim))
    sinusoid_inp = torch.einsum("i , j -> i j", torch.arange(num_pos, dtype=torch.float), inv_freq).float()
    return torch.cat((torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)), dim=1)


def get_embed_positions(embed_positions, position_ids):
    return embed_positions.to(position_ids.device).repeat(position_ids.shape[0], 1, 1)


def rotate_every_two(x):
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)  # in einsum notation: rearrange(x, '... d j -> ... (d j)')


def apply_rotary_pos_emb(tensor, sin, cos):
    sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
    cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
    return (tensor * cos) + (rotate_every_two(tensor) * sin)


class GPTJAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_positions, rotary_dim):
        super().__init__()
        self.register_buffer(
            "bias", torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions), persistent=False)
        self.register_buffer("masked_bias", torch.tensor(-1e9), persistent=False)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)
        self.embed_dim = d_model
        self.num_attention_heads = num_heads
        self.head_dim = d_model // num_heads
        self.scale_attn = torch.sqrt(torch.tensor(self.head_dim, dtype=torch.float32)).to(torch.get_default_dtype())
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)
        self.rotary_dim = rotary_dim
        self.embed_positions = create_sinusoidal_positions(max_positions, rotary_dim or d_model)

    def _split_heads(self, tensor, rotary):
        tensor = tensor.view(tensor.size()[:-1] + (self.num_attention_heads, self.head_dim))
        if rotary:
            return tensor
        return tensor.permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size()[:-2] + (self.num_attention_heads * self.head_dim,))

    def _attn(self, query, key, value, attention_mask):
        # compute causal mask from causal mask buffer
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        # Keep the attention weights computation in fp32 to avoid overflow issues
        query = query.to(torch.float32)
        key = key.to(torch.float32)
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.tensor(mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights, mask_value)
        attn_weights = attn_weights / self.scale_attn
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.to(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states, attention_mask, position_ids):
        query = self._split_heads(self.q_proj(hidden_states), True)
        key = self._split_heads(self.k_proj(hidden_states), True)
        value = self._split_heads(self.v_proj(hidden_states), False)
        embed_positions = get_embed_positions(self.embed_positions, position_ids)  # the tracing branch
        repeated_position_ids = position_ids.unsqueeze(-1).repeat(1, 1, embed_positions.shape[-1])
        sincos = torch.gather(embed_positions, 1, repeated_position_ids)
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
        if self.rotary_dim is not None:
            k_rot = key[:, :, :, : self.rotary_dim]
            k_pass = key[:, :, :, self.rotary_dim:]
            q_rot = query[:, :, :, : self.rotary_dim]
            q_pass = query[:, :, :, self.rotary_dim:]
            k_rot = apply_rotary_pos_emb(k_rot, sin, cos)
            q_rot = apply_rotary_pos_emb(q_rot, sin, cos)
            key = torch.cat([k_rot, k_pass], dim=-1)
            query = torch.cat([q_rot, q_pass], dim=-1)
        else:
            key = apply_rotary_pos_emb(key, sin, cos)
            query = apply_rotary_pos_emb(query, sin, cos)
        key = key.permute(0, 2, 1, 3)
        query = query.permute(0, 2, 1, 3)
        attn_output = self._merge_heads(self._attn(query, key, value, attention_mask))
        return self.resid_dropout(self.out_proj(attn_output))


class GPTJMLP(nn.Module):
    def __init__(self, d_model, intermediate):
        super().__init__()
        self.fc_in = nn.Linear(d_model, intermediate)
        self.fc_out = nn.Linear(intermediate, d_model)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(self.fc_out(gelu_new(self.fc_in(x))))


class GPTJBlock(nn.Module):
    def __init__(self, d_model, num_heads, max_positions, rotary_dim):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model, eps=1e-5)
        self.attn = GPTJAttention(d_model, num_heads, max_positions, rotary_dim)
        self.mlp = GPTJMLP(d_model, 4 * d_model)

    def forward(self, hidden_states, attention_mask, position_ids):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output = self.attn(hidden_states, attention_mask, position_ids)
        feed_forward_hidden_states = self.mlp(hidden_states)
        return attn_output + feed_forward_hidden_states + residual


class GPTJForCausalLM(nn.Module):
    """forward(input_ids, attention_mask) -> logits (no cache)."""

    def __init__(self, vocab, d_model, num_heads, layers, max_positions, rotary_dim):
        super().__init__()
        self.wte = nn.Embedding(vocab, d_model)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList(GPTJBlock(d_model, num_heads, max_positions, rotary_dim) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d_model, eps=1e-5)
        self.lm_head = nn.Linear(d_model, vocab)

    def forward(self, input_ids, attention_mask):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        batch_size = input_ids.shape[0]
        past_length = 0
        position_ids = torch.arange(past_length, input_shape[-1] + past_length, dtype=torch.long)
        position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        attention_mask = attention_mask.view(batch_size, -1)
        attention_mask = attention_mask[:, None, None, :]
        attention_mask = attention_mask.to(dtype=torch.float32)  # fp16 compatibility
        attention_mask = (1.0 - attention_mask) * torch.finfo(torch.float32).min
        hidden_states = self.drop(self.wte(input_ids))
        for block in self.h:
            hidden_states = block(hidden_states, attention_mask, position_ids)
        hidden_states = self.ln_f(hidden_states)
        return self.lm_head(hidden_states).to(torch.float32)
