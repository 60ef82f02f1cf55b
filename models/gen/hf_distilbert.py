"""DistilBERT written the way Hugging Face transformers writes it (modeling_distilbert, versions
4.30-4.45, MultiHeadSelfAttention, the eager attention).

The forms an export of the real thing carries, each kept here:
- Embeddings: word embeddings (padding_idx 0) plus learned position embeddings read through the
  position_ids buffer arange(max_positions).expand(1, -1) sliced [:, :T], LayerNorm (eps 1e-12);
- q_lin/k_lin/v_lin/out_lin Linear layers with bias; shape(x) = x.view(bs, -1, H, D).transpose(1, 2);
- q = q / math.sqrt(dim_per_head) BEFORE the scores, scores = matmul(q, k.transpose(2, 3));
- mask = (mask == 0).view(bs, 1, 1, k_length).expand_as(scores): the Expand reads the scores' own
  shape; scores.masked_fill(mask, torch.tensor(finfo.min));
- softmax, dropout, matmul with V, unshape = transpose(1, 2).contiguous().view(bs, -1, H * D), out_lin;
- post-norm blocks: sa_layer_norm(attn + x), FFN lin2(gelu(lin1(.))) (erf GELU), output_layer_norm(ffn + .).
"""
import math

import torch
from torch import nn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.dim = dim
        self.dropout = nn.Dropout(p=0.1)
        self.q_lin = nn.Linear(dim, dim)
        self.k_lin = nn.Linear(dim, dim)
        self.v_lin = nn.Linear(dim, dim)
        self.out_lin = nn.Linear(dim, dim)

    def forward(self, query, key, value, mask):
        bs, q_length, dim = query.size()
        k_length = key.size(1)
        dim_per_head = self.dim // self.n_heads
        mask_reshp = (bs, 1, 1, k_length)

        def shape(x):
            """separate heads"""
            return x.view(bs, -1, self.n_heads, dim_per_head).transpose(1, 2)

        def unshape(x):
            """group heads"""
            return x.transpose(1, 2).contiguous().view(bs, -1, self.n_heads * dim_per_head)

        q = shape(self.q_lin(query))  # (bs, n_heads, q_length, dim_per_head)
        k = shape(self.k_lin(key))  # (bs, n_heads, k_length, dim_per_head)
        v = shape(self.v_lin(value))  # (bs, n_heads, k_length, dim_per_head)
        q = q / math.sqrt(dim_per_head)  # (bs, n_heads, q_length, dim_per_head)
        scores = torch.matmul(q, k.transpose(2, 3))  # (bs, n_heads, q_length, k_length)
        mask = (mask == 0).view(mask_reshp).expand_as(scores)  # (bs, n_heads, q_length, k_length)
        scores = scores.masked_fill(mask, torch.tensor(torch.finfo(scores.dtype).min))
        weights = nn.functional.softmax(scores, dim=-1)  # (bs, n_heads, q_length, k_length)
        weights = self.dropout(weights)
        context = torch.matmul(weights, v)  # (bs, n_heads, q_length, dim_per_head)
        context = unshape(context)  # (bs, q_length, dim)
        return self.out_lin(context)


class FFN(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.dropout = nn.Dropout(p=0.1)
        self.lin1 = nn.Linear(dim, hidden_dim)
        self.lin2 = nn.Linear(hidden_dim, dim)
        self.activation = nn.GELU()

    def forward(self, x):
        return self.dropout(self.lin2(self.activation(self.lin1(x))))


class TransformerBlock(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.attention = MultiHeadSelfAttention(dim, n_heads)
        self.sa_layer_norm = nn.LayerNorm(dim, eps=1e-12)
        self.ffn = FFN(dim, 4 * dim)
        self.output_layer_norm = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, x, attn_mask):
        sa_output = self.attention(query=x, key=x, value=x, mask=attn_mask)
        sa_output = self.sa_layer_norm(sa_output + x)  # (bs, seq_length, dim)
        ffn_output = self.ffn(sa_output)  # (bs, seq_length, dim)
        return self.output_layer_norm(ffn_output + sa_output)


class Embeddings(nn.Module):
    def __init__(self, vocab, dim, max_positions, pad_token_id):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, dim, padding_idx=pad_token_id)
        self.position_embeddings = nn.Embedding(max_positions, dim)
        self.LayerNorm = nn.LayerNorm(dim, eps=1e-12)
        self.dropout = nn.Dropout(0.1)
        self.register_buffer("position_ids", torch.arange(max_positions).expand((1, -1)), persistent=False)

    def forward(self, input_ids):
        input_embeds = self.word_embeddings(input_ids)  # (bs, max_seq_length, dim)
        seq_length = input_embeds.size(1)
        position_ids = self.position_ids[:, :seq_length]
        position_embeddings = self.position_embeddings(position_ids)  # (bs, max_seq_length, dim)
        embeddings = input_embeds + position_embeddings  # (bs, max_seq_length, dim)
        embeddings = self.LayerNorm(embeddings)  # (bs, max_seq_length, dim)
        return self.dropout(embeddings)


class DistilBertModel(nn.Module):
    """forward(input_ids, attention_mask) -> last_hidden_state."""

    def __init__(self, vocab, dim, n_heads, layers, max_positions, pad_token_id=0):
        super().__init__()
        self.embeddings = Embeddings(vocab, dim, max_positions, pad_token_id)
        self.layer = nn.ModuleList(TransformerBlock(dim, n_heads) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        hidden_state = self.embeddings(input_ids)
        for layer_module in self.layer:
            hidden_state = layer_module(hidden_state, attention_mask)
        return hidden_state
