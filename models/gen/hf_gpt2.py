"""GPT-2 written the way Hugging Face transformers writes it (modeling_gpt2, eager attention).

The forms an export of the real thing carries, each kept here:
- Conv1D projections: torch.addmm(bias, x.view(-1, nx), weight) with weight stored (in, out);
- one c_attn projection split into Q, K, V with .split(embed_dim, dim=2);
- heads split by view + permute(0, 2, 1, 3), merged by permute + contiguous + view;
- scores = matmul(q, k.transpose(-1, -2)) / torch.full([], head_dim ** 0.5);
- the causal mask: a (1, 1, ctx, ctx) bool tril buffer sliced
  [:, :, key_len - query_len : key_len, :key_len], torch.where(mask, w, finfo.min);
- the padding mask: attention_mask[:, None, None, :], (1.0 - mask) * finfo.min, added to w;
- gelu_new: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3))));
- position ids arange(past, past + T); a tied token embedding and lm_head (Linear without bias
  whose weight is the embedding's);
- past_key_values.N.key/value in, present.N.key/value out (present = cat(past, new) on the
  sequence axis), as the Hugging Face ONNX exporters name them.
"""
import math

import torch
from torch import nn


class Conv1D(nn.Module):
    """A Linear whose weight is stored transposed, (in, out), applied with addmm."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(0.0, 0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, d_model, num_heads, context):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.embed_dim = d_model
        self.register_buffer(
            "bias", torch.tril(torch.ones((context, context), dtype=torch.bool)).view(1, 1, context, context),
            persistent=False)
        self.c_attn = Conv1D(3 * d_model, d_model)
        self.c_proj = Conv1D(d_model, d_model)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)

    def _split_heads(self, t):
        new_shape = t.size()[:-1] + (self.num_heads, self.head_dim)
        return t.view(new_shape).permute(0, 2, 1, 3)

    def _merge_heads(self, t):
        t = t.permute(0, 2, 1, 3).contiguous()
        return t.view(t.size()[:-2] + (self.num_heads * self.head_dim,))

    def _attn(self, query, key, value, attention_mask):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full(
            [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states, layer_past, attention_mask):
        query, key, value = self.c_attn(hidden_states).split(self.embed_dim, dim=2)
        query, key, value = self._split_heads(query), self._split_heads(key), self._split_heads(value)
        if layer_past is not None:
            past_key, past_value = layer_past
            key = torch.cat((past_key, key), dim=-2)
            value = torch.cat((past_value, value), dim=-2)
        present = (key, value)
        attn_output = self._merge_heads(self._attn(query, key, value, attention_mask))
        return self.resid_dropout(self.c_proj(attn_output)), present


class GPT2MLP(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.c_fc = Conv1D(4 * d_model, d_model)
        self.c_proj = Conv1D(d_model, 4 * d_model)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(self.c_proj(gelu_new(self.c_fc(x))))


class GPT2Block(nn.Module):
    def __init__(self, d_model, num_heads, context):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model, eps=1e-5)
        self.attn = GPT2Attention(d_model, num_heads, context)
        self.ln_2 = nn.LayerNorm(d_model, eps=1e-5)
        self.mlp = GPT2MLP(d_model)

    def forward(self, hidden_states, layer_past, attention_mask):
        attn_output, present = self.attn(self.ln_1(hidden_states), layer_past, attention_mask)
        hidden_states = attn_output + hidden_states
        hidden_states = hidden_states + self.mlp(self.ln_2(hidden_states))
        return hidden_states, present


class GPT2LMHeadModel(nn.Module):
    """forward(input_ids, attention_mask, *past) -> (logits, *presents); past as
    past_key_0, past_value_0, past_key_1, ... (none for the prefill graph)."""

    def __init__(self, vocab=97, d_model=64, num_heads=4, layers=2, context=64):
        super().__init__()
        self.layers = layers
        self.wte = nn.Embedding(vocab, d_model)
        self.wpe = nn.Embedding(context, d_model)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList(GPT2Block(d_model, num_heads, context) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d_model, eps=1e-5)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        with torch.no_grad():
            self.wte.weight.normal_(0.0, 0.02)
            self.wpe.weight.normal_(0.0, 0.01)
        self.lm_head.weight = self.wte.weight  # tied, as GPT-2's checkpoints are

    def forward(self, input_ids, attention_mask, *past):
        past_key_values = [None] * self.layers if not past else [
            (past[2 * i], past[2 * i + 1]) for i in range(self.layers)]
        batch_size, seq = input_ids.size()
        past_length = 0 if past_key_values[0] is None else past_key_values[0][0].size(-2)
        position_ids = torch.arange(past_length, seq + past_length, dtype=torch.long).unsqueeze(0)
        hidden_states = self.drop(self.wte(input_ids) + self.wpe(position_ids))
        mask = attention_mask.view(batch_size, -1)[:, None, None, :]
        mask = mask.to(dtype=hidden_states.dtype)
        mask = (1.0 - mask) * torch.finfo(hidden_states.dtype).min
        presents = []
        for block, layer_past in zip(self.h, past_key_values):
            hidden_states, present = block(hidden_states, layer_past, mask)
            presents.extend(present)
        logits = self.lm_head(self.ln_f(hidden_states))
        return (logits, *presents)


class GPT2WithPositionIds(GPT2LMHeadModel):
    """forward(input_ids, attention_mask, position_ids, *past): position ids given by the caller,
    as the Hugging Face exporters (optimum) write GPT-2, so that left-padded rows of a batch get
    the positions they would have alone (cumsum(attention_mask) - 1). The body is
    GPT2LMHeadModel.forward's with the arange replaced (kept apart so that the models exported
    from that class stay byte-identical)."""

    def forward(self, input_ids, attention_mask, position_ids, *past):
        past_key_values = [None] * self.layers if not past else [
            (past[2 * i], past[2 * i + 1]) for i in range(self.layers)]
        batch_size = input_ids.size(0)
        hidden_states = self.drop(self.wte(input_ids) + self.wpe(position_ids))
        mask = attention_mask.view(batch_size, -1)[:, None, None, :]
        mask = mask.to(dtype=hidden_states.dtype)
        mask = (1.0 - mask) * torch.finfo(hidden_states.dtype).min
        presents = []
        for block, layer_past in zip(self.h, past_key_values):
            hidden_states, present = block(hidden_states, layer_past, mask)
            presents.extend(present)
        logits = self.lm_head(self.ln_f(hidden_states))
        return (logits, *presents)
