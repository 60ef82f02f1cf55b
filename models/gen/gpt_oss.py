"""gpt-oss style attention with attention sinks, written as Hugging Face transformers' eager path writes it
(modeling_gpt_oss): a re-implementation, not the library.

- Q, K, V projections with bias, grouped K/V heads repeated by repeat_kv, rotary embeddings on Q and K;
- the mask as masking_utils builds it for eager attention on torch without vmap: kv_arange compared with the
  query positions (causal: kv <= q; sliding layers also kv > q - window), and the padding of the attention_mask
  input, combined and turned additive by torch.where(mask, 0, finfo.min), shape (B, 1, T, S);
- scores = Q·Kᵀ · scaling + mask;
- sinks: a learned logit per head, sinks.reshape(1, -1, 1, 1).expand(B, -1, T, -1), concatenated after the keys;
  the row max subtracted (combined_logits - combined_logits.max(-1, keepdim=True).values), softmax, and the
  sink column dropped (probs[..., :-1]) before P·V.

Layers alternate sliding (window) and full attention, as gpt-oss does. `trap` builds variants that must not
fuse: "query_column" concatenates a column computed from Q (not a per-head constant), "keeps_sink" slices
probs[..., 1:] (drops the first key and keeps the sink).
"""
import torch
from torch import nn


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rotary(x, positions, head_dim):
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    freqs = positions.to(torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos()[None, None] + rotate_half(x) * emb.sin()[None, None]


def repeat_kv(x, n_rep):
    b, kv, t, d = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(b, kv, n_rep, t, d).reshape(b, kv * n_rep, t, d)


def eager_mask(attention_mask, q_len, window, dtype):
    """(B, 1, T, S) additive mask: 0 where a query sees the key, finfo.min elsewhere."""
    kv_len = attention_mask.shape[-1]
    kv_arange = torch.arange(kv_len)
    cache_position = torch.arange(kv_len - q_len, kv_len).view(-1, 1)
    allowed = kv_arange[None, :] <= cache_position
    if window is not None:
        allowed = allowed & (kv_arange[None, :] > cache_position - window)
    allowed = allowed[None, None, :, :] & attention_mask[:, None, None, :].bool()
    return torch.where(allowed, torch.tensor(0.0, dtype=dtype), torch.tensor(torch.finfo(dtype).min, dtype=dtype))


class GptOssAttention(nn.Module):
    def __init__(self, d_model, heads, kv_heads, window=None, subtract_max=True, trap=None, layer=0):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, d_model // heads
        self.window, self.subtract_max, self.trap = window, subtract_max, trap
        self.q_proj = nn.Linear(d_model, heads * self.head_dim)
        self.k_proj = nn.Linear(d_model, kv_heads * self.head_dim)
        self.v_proj = nn.Linear(d_model, kv_heads * self.head_dim)
        self.o_proj = nn.Linear(heads * self.head_dim, d_model)
        # Learned sinks are of the order of the scores; some heads large, one below every score.
        logits = [0.5, 2.0, -1.0, 6.0][:heads] + [0.0] * max(0, heads - 4)
        self.sinks = nn.Parameter(torch.tensor(logits) + layer)
        self.scaling = self.head_dim ** -0.5

    def forward(self, x, attention_mask, past_key=None, past_value=None):
        b, t, _ = x.shape
        shape = (b, t, -1, self.head_dim)
        q = self.q_proj(x).view(shape).transpose(1, 2)
        k = self.k_proj(x).view(shape).transpose(1, 2)
        v = self.v_proj(x).view(shape).transpose(1, 2)
        total = attention_mask.shape[-1]
        positions = torch.arange(total - t, total)
        q, k = rotary(q, positions, self.head_dim), rotary(k, positions, self.head_dim)
        if past_key is not None:
            k = torch.cat([past_key, k], dim=2)
            v = torch.cat([past_value, v], dim=2)
        present = (k, v)
        k = repeat_kv(k, self.heads // self.kv_heads)
        v = repeat_kv(v, self.heads // self.kv_heads)
        w = torch.matmul(q, k.transpose(2, 3)) * self.scaling
        w = w + eager_mask(attention_mask, t, self.window, w.dtype)[:, :, :, : k.shape[-2]]
        if self.trap == "query_column":
            column = q.mean(dim=-1, keepdim=True)  # varies by row: not a sink
        else:
            column = self.sinks.reshape(1, -1, 1, 1).expand(q.shape[0], -1, q.shape[-2], -1)
        combined = torch.cat([w, column], dim=-1)
        if self.subtract_max:
            combined = combined - combined.max(dim=-1, keepdim=True).values
        probs = torch.softmax(combined, dim=-1, dtype=combined.dtype)
        p = probs[..., 1:] if self.trap == "keeps_sink" else probs[..., :-1]
        y = torch.matmul(p, v)
        y = self.o_proj(y.transpose(1, 2).reshape(b, t, -1))
        return (y, *present) if past_key is not None else y


class GptOssLayers(nn.Module):
    """Sliding and full attention layers alternating, each with a residual."""

    def __init__(self, d_model, heads, kv_heads, window, layers=2, subtract_max=True, trap=None):
        super().__init__()
        self.layers = nn.ModuleList(
            GptOssAttention(d_model, heads, kv_heads, window if i % 2 == 0 else None, subtract_max, trap, layer=i)
            for i in range(layers))

    def forward(self, x, attention_mask):
        for layer in self.layers:
            x = x + layer(x, attention_mask)
        return x


class GptOssDecode(nn.Module):
    """One sliding-window layer with a KV cache: past_key/past_value (B, kv_heads, P, D) concatenated before the
    new K/V, the presents returned; the window and the rotary positions bottom-right aligned with the past."""

    def __init__(self, d_model, heads, kv_heads, window):
        super().__init__()
        self.layer = GptOssAttention(d_model, heads, kv_heads, window)

    def forward(self, x, attention_mask, past_key, past_value):
        y, k, v = self.layer(x, attention_mask, past_key, past_value)
        return x + y, k, v
