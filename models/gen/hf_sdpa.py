"""Attention through torch.nn.functional.scaled_dot_product_attention, as torch 2's ONNX exporter writes it,
behind Hugging Face's masks.

Debian's torch 1.13 has no scaled_dot_product_attention, so `sdpa` below writes the graph torch 2's
opset-14 symbolic emits for it, op for op:
- the scale 1 / sqrt(E) from the query's shape: Shape, Slice [-1:], Cast to float, Sqrt, Div(1, .);
- Q times sqrt(scale), K transposed (-2, -1) times sqrt(scale), MatMul;
- is_causal: ones(L, S) (torch writes Expand of 1.0, here ConstantOfShape), Trilu (lower), Where(Equal(mask, 0), -inf, 0), added to the scores
  (aligned top-left, as torch's is_causal is);
- a bool attn_mask: Where(mask, 0, -inf) added; a float attn_mask: added as it is;
- Softmax(-1), MatMul with V.
Hugging Face's SDPA attention (LlamaSdpaAttention, transformers 4.38-4.47) calls it with the 4-D float
mask of _update_causal_mask (hf_llama.update_causal_mask) sliced to the key length, is_causal=False.
"""
import torch
from torch import nn

import hf_llama


def sdpa(query, key, value, attn_mask=None, is_causal=False):
    scale = 1.0 / torch.sqrt(torch._shape_as_tensor(query)[-1:].to(query.dtype))
    if is_causal:
        lower = torch.tril(torch.ones(query.shape[-2], key.shape[-2]))
        attn_mask = torch.where(lower == 0, torch.tensor(float("-inf")), torch.tensor(0.0))
    key_transposed = key.transpose(-2, -1)
    scores = torch.matmul(query * torch.sqrt(scale), key_transposed * torch.sqrt(scale))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn_mask = torch.where(attn_mask, torch.tensor([0.0]), torch.tensor([float("-inf")]))
        scores = scores + attn_mask
    return torch.matmul(torch.softmax(scores, dim=-1), value)


class SdpaAttention(hf_llama.LlamaAttention):
    """LlamaSdpaAttention without rotary embeddings: heads split, SDPA, heads merged."""

    def forward(self, hidden_states, attention_mask=None, is_causal=False):
        bsz, q_len, _ = hidden_states.size()
        split = lambda t: t.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q_proj(hidden_states)), split(self.k_proj(hidden_states)), split(self.v_proj(hidden_states))
        mask = attention_mask[:, :, :, : k.shape[-2]] if attention_mask is not None and attention_mask.dim() == 4 \
            else attention_mask
        out = sdpa(q, k, v, mask, is_causal)
        return self.o_proj(out.transpose(1, 2).contiguous().reshape(bsz, q_len, -1))


class LlamaSdpaMasked(nn.Module):
    """forward(x (B, T, d), attention_mask int64 (B, T)) -> y: HF's 4-D causal + padding mask, SDPA."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.self_attn = SdpaAttention(d_model, num_heads)

    def forward(self, x, attention_mask):
        mask = hf_llama.update_causal_mask(attention_mask, x, torch.arange(0, x.shape[1]))
        return self.self_attn(x, mask)


class SdpaCausal(nn.Module):
    """forward(x) -> y: SDPA with is_causal=True (no mask input)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.self_attn = SdpaAttention(d_model, num_heads)

    def forward(self, x):
        return self.self_attn(x, is_causal=True)


class SdpaBoolMask(nn.Module):
    """forward(x, attn_mask bool (B, 1, T, T)) -> y: SDPA with a bool mask given by the caller."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.self_attn = SdpaAttention(d_model, num_heads)

    def forward(self, x, attn_mask):
        return self.self_attn(x, attn_mask)
