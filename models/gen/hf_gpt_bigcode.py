"""GPTBigCode (StarCoder, SantaCoder) written the way Hugging Face transformers writes it
(modeling_gpt_bigcode, eager attention, multi_query, the CPU path).

The forms an export of the real thing carries, each kept here:
- one c_attn Linear giving the query (B, T, H*D) and one K/V head (B, T, 2D) by .split, the cache
  as one tensor: key_value = cat(layer_past, key_value, dim=-2), present = key_value, then
  key_value.split((D, D), dim=-1) and key.transpose(-1, -2) (B, D, S);
- the heads folded into the query axis, not the batch: query.reshape(B, T*H, D),
  torch.baddbmm(zeros(B, T*H, S), query, key, beta=1, alpha=D ** -0.5) viewed (B, T, H, S);
- the mask built once in the model: the bool tril buffer sliced bias[None, k-q:k, :k] times
  attention_mask.view(B, 1, -1).bool(), unsqueezed to (B, T, 1, S) for the head axis;
  torch.where(mask, w, full([], finfo.min)), softmax(dim=-1);
- bmm(w.view(B, T*H, S), value (B, S, D)).view(query_shape);
- position ids cumsum(attention_mask) - 1, masked_fill(attention_mask == 0, 1), sliced past the
  cache; a tied token embedding and lm_head; gelu_pytorch_tanh.
"""
import torch
from torch import nn

from hf_gpt2 import GPT2Block, GPT2LMHeadModel


class GPTBigCodeAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.embed_dim = d_model
        self.c_attn = nn.Linear(d_model, d_model + 2 * self.head_dim)
        self.c_proj = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)
        self.mask_value = None

    def _get_mask_value(self, dtype):
        if self.mask_value is None or self.mask_value.dtype != dtype:
            self.mask_value = torch.full([], torch.finfo(dtype).min, dtype=dtype)
        return self.mask_value

    def _attn(self, query, key, value, attention_mask):
        scale_factor = 1.0 / self.head_dim ** 0.5
        query_shape = query.shape
        batch_size = query_shape[0]
        key_length = key.size(-1)
        query_length = query_shape[1]
        attn_shape = (batch_size, query_length, self.num_heads, key_length)
        attn_view = (batch_size, query_length * self.num_heads, key_length)
        query = query.reshape(batch_size, query_length * self.num_heads, self.head_dim)
        zeros = torch.zeros(attn_view, dtype=query.dtype, device=query.device)
        attn_weights = torch.baddbmm(zeros, query, key, beta=1, alpha=scale_factor).view(attn_shape)
        mask_value = self._get_mask_value(attn_weights.dtype)
        attn_weights = torch.where(attention_mask, attn_weights, mask_value)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = self.attn_dropout(attn_weights)
        return torch.bmm(attn_weights.view(attn_view), value).view(query_shape)

    def forward(self, hidden_states, layer_past, attention_mask):
        query, key_value = self.c_attn(hidden_states).split((self.embed_dim, 2 * self.head_dim), dim=2)
        if layer_past is not None:
            key_value = torch.cat((layer_past, key_value), dim=-2)
        present = key_value
        key, value = key_value.split((self.head_dim, self.head_dim), dim=-1)
        attn_output = self._attn(query, key.transpose(-1, -2), value, attention_mask)
        return self.resid_dropout(self.c_proj(attn_output)), present


class GPTBigCodeMLP(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.c_fc = nn.Linear(d_model, 4 * d_model)
        self.c_proj = nn.Linear(4 * d_model, d_model)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(self.c_proj(nn.functional.gelu(self.c_fc(x), approximate="tanh")))


class GPTBigCodeBlock(GPT2Block):
    """GPT-2's block (ln_1, attention, residual, ln_2, MLP, residual) with GPTBigCode's attention and MLP."""

    def __init__(self, d_model, num_heads, context):
        super().__init__(d_model, num_heads, context)
        self.attn = GPTBigCodeAttention(d_model, num_heads)
        self.mlp = GPTBigCodeMLP(d_model)


class GPTBigCodeForCausalLM(GPT2LMHeadModel):
    """forward(input_ids, attention_mask, *past) -> (logits, *presents); one past per layer,
    (B, past, 2 * head_dim), keys then values along the last axis (none for the prefill graph).
    GPT-2's embeddings, final norm and tied head, with GPTBigCode's blocks and its model-level mask."""

    def __init__(self, vocab=97, d_model=64, num_heads=4, layers=2, context=64):
        super().__init__(vocab, d_model, num_heads, layers, context)
        self.h = nn.ModuleList(GPTBigCodeBlock(d_model, num_heads, context) for _ in range(layers))
        self.register_buffer("bias", torch.tril(torch.ones((context, context), dtype=torch.bool)),
                             persistent=False)

    def forward(self, input_ids, attention_mask, *past):
        past_key_values = list(past) if past else [None] * self.layers
        batch_size, query_length = input_ids.size()
        past_length = 0 if past_key_values[0] is None else past_key_values[0].size(-2)
        position_ids = attention_mask.long().cumsum(-1) - 1
        position_ids.masked_fill_(attention_mask == 0, 1)
        if past_length > 0:
            position_ids = position_ids[:, past_length: query_length + past_length:]
        key_length = past_length + query_length
        self_attention_mask = self.bias[None, key_length - query_length: key_length, :key_length]
        self_attention_mask = self_attention_mask * attention_mask.view(batch_size, 1, -1).to(dtype=torch.bool)
        mask = self_attention_mask.unsqueeze(2)
        hidden_states = self.drop(self.wte(input_ids) + self.wpe(position_ids))
        presents = []
        for block, layer_past in zip(self.h, past_key_values):
            hidden_states, present = block(hidden_states, layer_past, mask)
            presents.append(present)
        logits = self.lm_head(self.ln_f(hidden_states))
        return (logits, *presents)
