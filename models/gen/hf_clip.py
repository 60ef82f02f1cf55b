"""CLIP's text encoder written the way Hugging Face transformers writes it (modeling_clip, versions
4.27-4.30: CLIPTextTransformer._build_causal_attention_mask; CLIPAttention is the same through 4.45).

The forms an export of the real thing carries, each kept here:
- token plus learned position embeddings (position_ids buffer arange(max_positions).expand(1, -1)
  sliced [:, :T]);
- the causal mask built per batch: torch.empty(B, T, T), fill_(torch.tensor(finfo.min)), triu_(1)
  (finfo.min above the diagonal, 0 on and below it), unsqueeze(1) to (B, 1, T, T);
- the padding mask by _expand_mask: 1.0 - attention_mask[:, None, None, :].expand(B, 1, T, S).to(float),
  masked_fill(inverted.to(bool), finfo.min);
- CLIPAttention: q_proj(h) * head_dim ** -0.5 before the head split; _shape = view(B, T, H, D)
  .transpose(1, 2).contiguous(); heads merged into the batch, view(B * H, -1, D); scores
  torch.bmm(q, k.transpose(1, 2)); the causal mask added to the (B, H, T, S) view and viewed back to
  (B * H, T, S), then the padding mask the same way; softmax, dropout, bmm with V, view(B, H, T, D),
  transpose(1, 2), reshape, out_proj;
- pre-norm encoder layers with the quick_gelu MLP (x * sigmoid(1.702 x)), final_layer_norm;
- the pooled output last_hidden_state[arange(B), input_ids.to(int).argmax(-1)] (the eos token has the
  largest id, the eos_token_id == 2 branch of later versions).
"""
import torch
from torch import nn


def _expand_mask(mask, dtype, tgt_len=None):
    """Expands attention_mask from `[bsz, seq_len]` to `[bsz, 1, tgt_seq_len, src_seq_len]`."""
    bsz, src_len = mask.size()
    tgt_len = tgt_len if tgt_len is not None else src_len
    expanded_mask = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    inverted_mask = 1.0 - expanded_mask
    return inverted_mask.masked_fill(inverted_mask.to(torch.bool), torch.finfo(dtype).min)


class CLIPAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.embed_dim = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.scale = self.head_dim ** -0.5
        self.dropout = 0.0
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.q_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, hidden_states, attention_mask, causal_attention_mask):
        bsz, tgt_len, embed_dim = hidden_states.size()
        query_states = self.q_proj(hidden_states) * self.scale
        key_states = self._shape(self.k_proj(hidden_states), -1, bsz)
        value_states = self._shape(self.v_proj(hidden_states), -1, bsz)
        proj_shape = (bsz * self.num_heads, -1, self.head_dim)
        query_states = self._shape(query_states, tgt_len, bsz).view(*proj_shape)
        key_states = key_states.view(*proj_shape)
        value_states = value_states.view(*proj_shape)
        src_len = key_states.size(1)
        attn_weights = torch.bmm(query_states, key_states.transpose(1, 2))
        if attn_weights.size() != (bsz * self.num_heads, tgt_len, src_len):
            raise ValueError(f"Attention weights should be of size {(bsz * self.num_heads, tgt_len, src_len)}")
        # apply the causal_attention_mask first
        if causal_attention_mask is not None:
            if causal_attention_mask.size() != (bsz, 1, tgt_len, src_len):
                raise ValueError(f"Attention mask should be of size {(bsz, 1, tgt_len, src_len)}")
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len) + causal_attention_mask
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        if attention_mask is not None:
            if attention_mask.size() != (bsz, 1, tgt_len, src_len):
                raise ValueError(f"Attention mask should be of size {(bsz, 1, tgt_len, src_len)}")
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len) + attention_mask
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_probs = nn.functional.dropout(attn_weights, p=self.dropout, training=self.training)
        attn_output = torch.bmm(attn_probs, value_states)
        attn_output = attn_output.view(bsz, self.num_heads, tgt_len, self.head_dim)
        attn_output = attn_output.transpose(1, 2)
        attn_output = attn_output.reshape(bsz, tgt_len, embed_dim)
        return self.out_proj(attn_output)


class CLIPMLP(nn.Module):
    def __init__(self, d_model, intermediate):
        super().__init__()
        self.fc1 = nn.Linear(d_model, intermediate)
        self.fc2 = nn.Linear(intermediate, d_model)

    def forward(self, hidden_states):
        hidden_states = self.fc1(hidden_states)
        hidden_states = hidden_states * torch.sigmoid(1.702 * hidden_states)  # QuickGELUActivation
        return self.fc2(hidden_states)


class CLIPEncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.self_attn = CLIPAttention(d_model, num_heads)
        self.layer_norm1 = nn.LayerNorm(d_model, eps=1e-5)
        self.mlp = CLIPMLP(d_model, 4 * d_model)
        self.layer_norm2 = nn.LayerNorm(d_model, eps=1e-5)

    def forward(self, hidden_states, attention_mask, causal_attention_mask):
        residual = hidden_states
        hidden_states = self.layer_norm1(hidden_states)
        hidden_states = self.self_attn(hidden_states, attention_mask, causal_attention_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.layer_norm2(hidden_states)
        return residual + self.mlp(hidden_states)


class CLIPTextModel(nn.Module):
    """forward(input_ids, attention_mask) -> (last_hidden_state, pooler_output)."""

    def __init__(self, vocab, d_model, num_heads, layers, max_positions):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, d_model)
        self.position_embedding = nn.Embedding(max_positions, d_model)
        self.register_buffer("position_ids", torch.arange(max_positions).expand((1, -1)), persistent=False)
        self.layers = nn.ModuleList(CLIPEncoderLayer(d_model, num_heads) for _ in range(layers))
        self.final_layer_norm = nn.LayerNorm(d_model, eps=1e-5)

    @staticmethod
    def _build_causal_attention_mask(bsz, seq_len, dtype):
        # lazily create causal attention mask, with full attention between the vision tokens
        # pytorch uses additive attention mask; fill with -inf
        mask = torch.empty(bsz, seq_len, seq_len, dtype=dtype)
        mask.fill_(torch.tensor(torch.finfo(dtype).min))
        mask.triu_(1)  # zero out the lower diagonal
        mask = mask.unsqueeze(1)  # expand mask
        return mask

    def forward(self, input_ids, attention_mask):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        seq_length = input_ids.shape[-1]
        position_ids = self.position_ids[:, :seq_length]
        hidden_states = self.token_embedding(input_ids) + self.position_embedding(position_ids)
        bsz, seq_len = input_shape
        # CLIP's text model uses causal mask, prepare it here.
        causal_attention_mask = self._build_causal_attention_mask(bsz, seq_len, hidden_states.dtype).to(
            hidden_states.device)
        # expand attention_mask: [bsz, seq_len] -> [bsz, 1, tgt_seq_len, src_seq_len]
        attention_mask = _expand_mask(attention_mask, hidden_states.dtype)
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask, causal_attention_mask)
        last_hidden_state = self.final_layer_norm(hidden_states)
        pooled_output = last_hidden_state[
            torch.arange(last_hidden_state.shape[0], device=last_hidden_state.device),
            input_ids.to(dtype=torch.int, device=last_hidden_state.device).argmax(dim=-1)]
        return last_hidden_state, pooled_output
