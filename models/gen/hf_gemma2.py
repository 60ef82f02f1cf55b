"""Gemma 2's attention as Hugging Face transformers writes it (modeling_gemma2, eager, 4.42-4.44): the
LLaMA-style 4-D causal + padding mask (hf_llama.update_causal_mask); on sliding layers the decoder layer
hides keys `sliding_window` or more back with
`torch.where(torch.tril(torch.ones_like(mask, dtype=bool), diagonal=-sliding_window), finfo.min, mask)`;
scores `matmul(q, k.transpose(2, 3)) * query_pre_attn_scalar ** -0.5`, then the logit soft-capping
`tanh(w / softcap) * softcap`, plus the mask, float32 softmax. Layers alternate sliding (even) and global
(odd). Rotary embeddings and the MLP are left out: the masks and the soft-capping are what this tests."""
import torch
from torch import nn

import hf_llama


class Gemma2Attention(hf_llama.LlamaAttention):
    def __init__(self, d_model, num_heads, query_pre_attn_scalar, softcap):
        super().__init__(d_model, num_heads)
        self.scaling = query_pre_attn_scalar ** -0.5
        self.softcap = softcap

    def forward(self, hidden_states, attention_mask):
        bsz, q_len, _ = hidden_states.size()
        split = lambda t: t.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q_proj(hidden_states)), split(self.k_proj(hidden_states)), split(self.v_proj(hidden_states))
        attn_weights = torch.matmul(q, k.transpose(2, 3)) * self.scaling
        attn_weights = attn_weights / self.softcap
        attn_weights = torch.tanh(attn_weights)
        attn_weights = attn_weights * self.softcap
        attn_weights = attn_weights + attention_mask[:, :, :, : k.shape[-2]]
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(attn_weights, v).transpose(1, 2).contiguous().reshape(bsz, q_len, -1)
        return self.o_proj(out)


class Gemma2Layers(nn.Module):
    """forward(x (B, T, d), attention_mask int64 (B, T)) -> y through `layers` attention blocks with residuals."""

    def __init__(self, d_model=64, num_heads=4, layers=2, sliding_window=4, query_pre_attn_scalar=24.0, softcap=50.0):
        super().__init__()
        self.attn = nn.ModuleList(Gemma2Attention(d_model, num_heads, query_pre_attn_scalar, softcap)
                                  for _ in range(layers))
        self.sliding_window = sliding_window

    def forward(self, x, attention_mask):
        mask = hf_llama.update_causal_mask(attention_mask, x, torch.arange(0, x.shape[1]))
        for i, attn in enumerate(self.attn):
            layer_mask = mask
            if i % 2 == 0:
                # HF passes the Python float; torch 1.13's exporter needs it as a tensor of the mask's type.
                min_dtype = torch.tensor(torch.finfo(x.dtype).min, dtype=x.dtype)
                sliding = torch.tril(torch.ones_like(mask, dtype=torch.bool), diagonal=-self.sliding_window)
                layer_mask = torch.where(sliding, min_dtype, mask)
            x = x + attn(x, layer_mask)
        return x
