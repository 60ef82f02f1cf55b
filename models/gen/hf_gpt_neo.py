"""GPT-Neo written the way Hugging Face transformers writes it (modeling_gpt_neo, versions 4.30-4.36,
GPTNeoSelfAttention, the eager attention with the causal bias buffer).

The forms an export of the real thing carries, each kept here:
- attention_types alternating global and local layers; each layer's own bool buffer
  bias = tril(ones((max_positions, max_positions), bool)) viewed (1, 1, P, P), and for a local layer
  bias ^ tril(bias, -window_size) (bitwise_xor): a query sees itself and the window_size - 1 keys
  before it (the fused op's `window` window_size). `window_offset` moves tril's diagonal to
  -window_size + offset: 1 is the off-by-one trap, one key narrower;
- q/k/v bias-free Linear layers, out_proj with bias; heads split by view + permute(0, 2, 1, 3);
- _attn in float32 WITHOUT any scaling (GPT-Neo's scores are not divided by sqrt(head_dim)):
  matmul(q, k.transpose(-1, -2)), bias[:, :, k-q:k, :k], torch.where(causal_mask, w,
  torch.tensor(finfo.min)), + attention_mask (the model's (1 - mask) * finfo.min), softmax, matmul V;
- learned position embeddings from arange(past, past + T); gelu_new MLP; pre-norm blocks;
  lm_head tied to wte; wte and wpe drawn N(0, 0.02) as _init_weights does.
"""
import torch
from torch import nn

from hf_gpt2 import gelu_new


class GPTNeoSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_positions, attention_type, window_size, window_offset=0):
        super().__init__()
        bias = torch.tril(torch.ones((max_positions, max_positions), dtype=bool)).view(
            1, 1, max_positions, max_positions)
        # local causal self attention is a sliding window where each token can only attend to the previous
        # window_size tokens. This is implemented by updating the causal mask such that for each token
        # all other tokens are masked except the previous window_size tokens.
        if attention_type == "local":
            bias = torch.bitwise_xor(bias, torch.tril(bias, -window_size + window_offset))
        self.register_buffer("bias", bias, persistent=False)
        self.register_buffer("masked_bias", torch.tensor(-1e9), persistent=False)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)
        self.embed_dim = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=True)

    def _split_heads(self, tensor):
        tensor = tensor.view(tensor.size()[:-1] + (self.num_heads, self.head_dim))
        return tensor.permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size()[:-2] + (self.num_heads * self.head_dim,))

    def _attn(self, query, key, value, attention_mask):
        # Keep the attention weights computation in fp32 to avoid overflow issues
        query = query.to(torch.float32)
        key = key.to(torch.float32)
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        # Need to be a tensor, otherwise we get error: `RuntimeError: expected scalar type float but found double`.
        mask_value = torch.tensor(mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights, mask_value)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.to(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states, attention_mask):
        query = self._split_heads(self.q_proj(hidden_states))
        key = self._split_heads(self.k_proj(hidden_states))
        value = self._split_heads(self.v_proj(hidden_states))
        attn_output = self._merge_heads(self._attn(query, key, value, attention_mask))
        return self.resid_dropout(self.out_proj(attn_output))


class GPTNeoMLP(nn.Module):
    def __init__(self, d_model, intermediate):
        super().__init__()
        self.c_fc = nn.Linear(d_model, intermediate)
        self.c_proj = nn.Linear(intermediate, d_model)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(self.c_proj(gelu_new(self.c_fc(x))))


class GPTNeoBlock(nn.Module):
    def __init__(self, d_model, num_heads, max_positions, attention_type, window_size, window_offset):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model, eps=1e-5)
        self.attn = GPTNeoSelfAttention(d_model, num_heads, max_positions, attention_type, window_size,
                                        window_offset)
        self.ln_2 = nn.LayerNorm(d_model, eps=1e-5)
        self.mlp = GPTNeoMLP(d_model, 4 * d_model)

    def forward(self, hidden_states, attention_mask):
        residual = hidden_states
        hidden_states = self.attn(self.ln_1(hidden_states), attention_mask)
        hidden_states = hidden_states + residual
        residual = hidden_states
        return residual + self.mlp(self.ln_2(hidden_states))


class GPTNeoForCausalLM(nn.Module):
    """forward(input_ids, attention_mask) -> logits (no cache). `attention_types` is one entry per layer,
    "global" or "local"; `window_offset` applies to the local layers."""

    def __init__(self, vocab, d_model, num_heads, max_positions, window_size, attention_types, window_offset=0):
        super().__init__()
        self.wte = nn.Embedding(vocab, d_model)
        self.wpe = nn.Embedding(max_positions, d_model)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList(GPTNeoBlock(d_model, num_heads, max_positions, t, window_size, window_offset)
                               for t in attention_types)
        self.ln_f = nn.LayerNorm(d_model, eps=1e-5)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        with torch.no_grad():  # as _init_weights: the tied logits stay O(1)
            self.wte.weight.normal_(0.0, 0.02)
            self.wpe.weight.normal_(0.0, 0.02)
        self.lm_head.weight = self.wte.weight  # tied

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
        hidden_states = self.drop(self.wte(input_ids) + self.wpe(position_ids))
        for block in self.h:
            hidden_states = block(hidden_states, attention_mask)
        return self.lm_head(self.ln_f(hidden_states))
