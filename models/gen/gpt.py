"""A small GPT: token + position embeddings, pre-LayerNorm blocks with one fused QKV
Linear split into Q, K, V, causal attention, GELU MLP, final LayerNorm, LM head.

mask_style "maskfill": scores.masked_fill(triu(1) buffer, -inf)
mask_style "where_finfo": torch.where(tril buffer, scores, finfo(dtype).min) (True = keep)
GPTWithCache takes past_key_i/past_value_i per layer and returns logits and presents.
"""
import torch
from torch import nn

from attention import causal_mask


class FusedQKVAttention(nn.Module):
    def __init__(self, d_model, num_heads, context_length, mask_style="maskfill"):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.mask_style = mask_style
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(0.1)
        blocked = causal_mask(context_length)
        self.register_buffer("mask", ~blocked if mask_style == "where_finfo" else blocked)

    def heads(self, t, b, num_tokens):
        return t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

    def masked(self, scores, rows, cols):
        """rows/cols: the slice of the context-sized buffer for these queries/keys."""
        m = self.mask[rows, cols]
        if self.mask_style == "where_finfo":
            # a bare Python float here makes torch 1.13 export a float64 constant (invalid
            # Where); a 0-d tensor of the scores' dtype is what HF-style code writes anyway
            fill = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
            return torch.where(m, scores, fill)
        return scores.masked_fill(m, float("-inf"))

    def forward(self, x, past_k=None, past_v=None):
        b, num_tokens, d_model = x.shape
        q, k, v = self.qkv(x).split(d_model, dim=2)
        q, k, v = (self.heads(t, b, num_tokens) for t in (q, k, v))
        if past_k is not None:
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        scores = q @ k.transpose(-2, -1) / self.head_dim ** 0.5
        if past_k is None:
            rows = cols = slice(None, num_tokens)
        else:  # bottom-right aligned: query i sits at absolute position past + i
            total = k.shape[2]
            rows, cols = slice(total - num_tokens, total), slice(None, total)
        scores = self.masked(scores, rows, cols)
        weights = self.dropout(torch.softmax(scores, dim=-1))
        y = (weights @ v).transpose(1, 2).contiguous().view(b, num_tokens, d_model)
        return self.out_proj(y), k, v


class Block(nn.Module):
    def __init__(self, d_model, num_heads, context_length, mask_style):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = FusedQKVAttention(d_model, num_heads, context_length, mask_style)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x, past_k=None, past_v=None):
        a, k, v = self.attn(self.ln1(x), past_k, past_v)
        x = x + a
        return x + self.mlp(self.ln2(x)), k, v


class GPT(nn.Module):
    def __init__(self, vocab=97, d_model=128, num_heads=4, layers=2, context_length=64,
                 mask_style="maskfill"):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.blocks = nn.ModuleList(
            Block(d_model, num_heads, context_length, mask_style) for _ in range(layers))
        self.final_norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        self.randomize_norms()

    def randomize_norms(self):
        """LayerNorm weights 1 ± noise, biases small noise: a wrong gamma/beta shows, and
        torch does not dedupe equal initializers into Identity nodes."""
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.LayerNorm):
                    m.weight.add_(0.1 * torch.randn_like(m.weight))
                    m.bias.normal_(0.0, 0.1)

    def run(self, input_ids, pasts):
        """pasts: list of (past_k, past_v) or None per layer. Returns logits, presents."""
        past = 0 if pasts[0] is None else pasts[0][0].shape[2]
        pos = torch.arange(past, past + input_ids.shape[1], device=input_ids.device)
        x = self.tok_emb(input_ids) + self.pos_emb(pos)
        presents = []
        for block, kv in zip(self.blocks, pasts):
            x, k, v = block(x, *(kv if kv is not None else (None, None)))
            presents.append((k, v))
        return self.lm_head(self.final_norm(x)), presents

    def forward(self, input_ids):
        return self.run(input_ids, [None] * len(self.blocks))[0]


class GPTWithCache(GPT):
    """forward(input_ids, past_key_0, past_value_0, past_key_1, ...) ->
    (logits, present_key_0, present_value_0, ...)."""

    def forward(self, input_ids, *past_flat):
        pasts = [(past_flat[2 * i], past_flat[2 * i + 1]) for i in range(len(self.blocks))]
        logits, presents = self.run(input_ids, pasts)
        return (logits,) + tuple(t for kv in presents for t in kv)
