"""Qwen3 as Hugging Face transformers writes it (modeling_qwen3, eager): LLaMA's decoder (hf_llama.py) with a
per-head RMSNorm on the queries and keys before the rotary embedding,
`q = q_norm(q_proj(x).view(B, T, H, D)).transpose(1, 2)` and the same for k with k_norm, both
Qwen3RMSNorm(head_dim) (LlamaRMSNorm's formula over the head dim)."""
from torch import nn

import hf_llama


class Qwen3Attention(hf_llama.LlamaGQAttention):
    def __init__(self, d_model, num_heads, kv_heads, eps):
        super().__init__(d_model, num_heads, kv_heads)
        self.q_norm = hf_llama.LlamaRMSNorm(self.head_dim, eps)
        self.k_norm = hf_llama.LlamaRMSNorm(self.head_dim, eps)

    def forward(self, hidden_states, attention_mask, position_embeddings, past_key_value):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_norm(self.q_proj(hidden_states).view(bsz, q_len, -1, self.head_dim)).transpose(1, 2)
        key_states = self.k_norm(self.k_proj(hidden_states).view(bsz, q_len, -1, self.head_dim)).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, -1, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = hf_llama.apply_rotary_pos_emb(query_states, key_states, cos, sin)
        if past_key_value is not None:
            key_states = hf_llama.torch.cat([past_key_value[0], key_states], dim=-2)
            value_states = hf_llama.torch.cat([past_key_value[1], value_states], dim=-2)
        present = (key_states, value_states)
        key_states = hf_llama.repeat_kv(key_states, self.num_key_value_groups)
        value_states = hf_llama.repeat_kv(value_states, self.num_key_value_groups)
        attn_output = hf_llama.eager_attention(query_states, key_states, value_states, attention_mask, self.head_dim)
        return self.o_proj(attn_output), present


class Qwen3ForCausalLM(hf_llama.LlamaForCausalLM):
    def __init__(self, vocab=97, d_model=64, num_heads=4, kv_heads=2, layers=2, intermediate=176, eps=1e-6):
        super().__init__(vocab, d_model, num_heads, kv_heads, layers, intermediate, theta=1000000.0, eps=eps)
        for layer in self.layers:
            layer.self_attn = Qwen3Attention(d_model, num_heads, kv_heads, eps)
        for module in self.modules():   # norms away from ones, so that a wrong norm shows
            if isinstance(module, hf_llama.LlamaRMSNorm):
                nn.init.uniform_(module.weight, 0.5, 1.5)
