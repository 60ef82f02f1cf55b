"""Attention in mixed precision, as model libraries write it for float16 and bfloat16 checkpoints.

Each module is the library's eager attention code, d_model 64, 4 heads of 16:
- LLaMA / Mistral (hf_llama.LlamaMaskedAttention, used as it is): scores
  matmul(q, k.transpose(2, 3)) / sqrt(D) in the model's type, + the 4-D `_update_causal_mask` mask
  (triu(finfo(dtype).min), padding by ScatterND), softmax(w, dim=-1, dtype=torch.float32)
  .to(query_states.dtype): a Cast to float32 before the Softmax and one back after it.
- OPTAttention: OPT's eager attention written on 4-D (B, H, T, D) heads (OPT itself runs bmm on
  (B*H, T, D)): q_proj(x) * head_dim**-0.5, scores q @ kᵀ, + the decoder mask of
  `_make_causal_mask` (full(finfo.min) zeroed below the diagonal) plus `_expand_mask` (the inverted
  padding masked_fill'ed with finfo.min), torch.max(w, finfo(w.dtype).min) (its 0-d tensor given
  the scores' dtype: see OPTAttention.forward), and
  `if attn_weights.dtype == torch.float16: softmax(w, dim=-1, dtype=torch.float32).to(torch.float16)`.
- T5Attention: no scale, no position bias, no mask: softmax(scores.float(), dim=-1).type_as(scores).
- Fp16CacheAttention: a float32 GPT-style block (causal bias buffer sliced [k-q:k, :k],
  where(causal, w, finfo.min)) whose KV cache is kept in float16: k = cat(past_key.float(), k),
  the present stored back with .half().
- Llama16BitAttention: LLaMA's attention with its mask as a bfloat16 export below opset 20 writes it
  (llama_mask_16bit: the full() in float32 cast to the type), and called without an attention_mask
  (the causal part alone, added to float16 scores).
- GPT-2 (hf_gpt2.GPT2Attention) in float16 throughout: where(causal, w, finfo(fp16).min) plus
  (1 - attention_mask) * finfo(fp16).min, a float16 softmax, no Cast.

Debian's torch 1.13 has no float16 GEMM on the CPU ("addmm_impl_cpu_" not implemented for 'Half')
nor a float16 softmax, so a `.half()` model cannot run there as it is. The float16 models are traced
with stand-in CPU kernels for those four ops (`install_half_cpu_kernels`, in a process of their own):
the tracer records the aten ops the model calls, not the kernels under them, so the graph is the
one a float16 export writes. (torch 1.13 does trace bfloat16 on the CPU, but its exporter fails on
LLaMA's bfloat16 mask, `causal_mask + attention_mask` of bfloat16 and int64: "ScalarType
ComplexDouble is an unexpected tensor scalar type", and GPT-2's and OPT's torch.full become a
bfloat16 ConstantOfShape, which ONNX allows only from opset 20. The bfloat16 LLaMA is written as
such an export below opset 20 writes its mask: llama_mask_16bit.)
`HalfReference` gives the float16 PyTorch outputs on the CPU: matmul, linear and addmm
computed in float32 and rounded once to float16 (what a float16 GEMM with float32 accumulation
gives), a float16 softmax computed in float32 and rounded; every other op runs in float16. The
bfloat16 references are computed the same way in bfloat16.
"""
import contextlib
import math

import torch
from torch import nn

import hf_gpt2
import hf_llama

def make_causal_mask(bsz, tgt_len, dtype):
    """OPT's _make_causal_mask (no past): 0 on and below the diagonal, finfo.min above."""
    mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min)
    mask_cond = torch.arange(mask.size(-1))
    mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    mask = mask.to(dtype)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len)


def expand_mask(mask, dtype, tgt_len):
    """OPT's _expand_mask: (B, S) ones/zeros -> (B, 1, T, S) with finfo.min on padding."""
    bsz, src_len = mask.size()
    expanded_mask = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    inverted_mask = 1.0 - expanded_mask
    return inverted_mask.masked_fill(inverted_mask.to(torch.bool), torch.finfo(dtype).min)


class OPTAttention(nn.Module):
    """forward(x (B, T, 64), attention_mask int64 (B, T)) -> y (B, T, 64)."""

    def __init__(self, d_model=64, num_heads=4):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.embed_dim = d_model
        self.scaling = self.head_dim ** -0.5
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.q_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, hidden_states, attention_mask):
        bsz, tgt_len, _ = hidden_states.size()
        # OPTDecoder._prepare_decoder_attention_mask
        causal = make_causal_mask(bsz, tgt_len, hidden_states.dtype)
        mask = expand_mask(attention_mask, hidden_states.dtype, tgt_len) + causal
        query_states = self._shape(self.q_proj(hidden_states) * self.scaling, tgt_len, bsz)
        key_states = self._shape(self.k_proj(hidden_states), -1, bsz)
        value_states = self._shape(self.v_proj(hidden_states), -1, bsz)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3))
        attn_weights = attn_weights + mask
        # OPT writes torch.tensor(finfo.min) without a dtype: a float32 tensor, which torch 1.13
        # exports as Max(float16, float32), a graph no ONNX runtime accepts; the dtype keeps
        # what eager PyTorch computes (the 0-d float32 operand does not promote).
        attn_weights = torch.max(attn_weights, torch.tensor(torch.finfo(attn_weights.dtype).min,
                                                            dtype=attn_weights.dtype))
        if attn_weights.dtype == torch.float16:
            attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(torch.float16)
        else:
            attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).reshape(bsz, tgt_len, self.embed_dim)
        return self.out_proj(attn_output)


class T5Attention(nn.Module):
    """T5's encoder self-attention without the position bias: forward(x (B, T, 64)) -> y."""

    def __init__(self, d_model=64, num_heads=4):
        super().__init__()
        self.n_heads = num_heads
        self.key_value_proj_dim = d_model // num_heads
        self.inner_dim = d_model
        self.q = nn.Linear(d_model, self.inner_dim, bias=False)
        self.k = nn.Linear(d_model, self.inner_dim, bias=False)
        self.v = nn.Linear(d_model, self.inner_dim, bias=False)
        self.o = nn.Linear(self.inner_dim, d_model, bias=False)
        self.dropout = 0.1

    def forward(self, hidden_states):
        batch_size = hidden_states.shape[0]

        def shape(states):
            return states.view(batch_size, -1, self.n_heads, self.key_value_proj_dim).transpose(1, 2)

        def unshape(states):
            return states.transpose(1, 2).contiguous().view(batch_size, -1, self.inner_dim)

        query_states = shape(self.q(hidden_states))
        key_states = shape(self.k(hidden_states))
        value_states = shape(self.v(hidden_states))
        scores = torch.matmul(query_states, key_states.transpose(3, 2))
        attn_weights = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
        attn_weights = nn.functional.dropout(attn_weights, p=self.dropout, training=self.training)
        attn_output = unshape(torch.matmul(attn_weights, value_states))
        return self.o(attn_output)


class Fp16CacheAttention(nn.Module):
    """A float32 causal block with a float16 KV cache:
    forward(x (B, T, 64) f32, past_key, past_value (B, 4, P, 16) f16) -> y f32, present_key/value f16."""

    def __init__(self, d_model=64, num_heads=4, context=64):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.d_model = d_model
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.register_buffer(
            "bias", torch.tril(torch.ones((context, context), dtype=torch.bool)).view(1, 1, context, context),
            persistent=False)

    def forward(self, x, past_key, past_value):
        b, t, _ = x.shape
        q, k, v = (u.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
                   for u in self.qkv(x).split(self.d_model, dim=2))
        k = torch.cat((past_key.float(), k), dim=-2)
        v = torch.cat((past_value.float(), v), dim=-2)
        present_key, present_value = k.half(), v.half()
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        query_length, key_length = q.size(-2), k.size(-2)
        causal = self.bias[:, :, key_length - query_length: key_length, :key_length]
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        y = torch.matmul(torch.softmax(w, dim=-1), v)
        y = self.proj(y.transpose(1, 2).contiguous().view(b, t, self.d_model))
        return y, present_key, present_value


class GPT2Attention(nn.Module):
    """Hugging Face GPT-2's attention with GPT2Model's padding mask:
    forward(x (B, T, 64), attention_mask int64 (B, T) or None) -> y."""

    def __init__(self, d_model=64, num_heads=4, context=64):
        super().__init__()
        self.attn = hf_gpt2.GPT2Attention(d_model, num_heads, context)

    def forward(self, hidden_states, attention_mask=None):
        mask = None
        if attention_mask is not None:
            mask = attention_mask[:, None, None, :].to(dtype=hidden_states.dtype)
            mask = (1.0 - mask) * torch.finfo(hidden_states.dtype).min
        y, _ = self.attn(hidden_states, None, mask)
        return y


class FloatIO(nn.Module):
    """A 16-bit model behind float32 graph inputs and outputs (numpy has no bfloat16):
    x.to(dtype), the model, .float()."""

    def __init__(self, model, dtype):
        super().__init__()
        self.model = model
        self.dtype = dtype

    def forward(self, x, *rest):
        return self.model(x.to(self.dtype), *rest).float()


LlamaAttention = hf_llama.LlamaMaskedAttention


def llama_mask_16bit(attention_mask, input_tensor, cache_position):
    """hf_llama.update_causal_mask as an export of a 16-bit LLaMA writes it below opset 20, where
    ConstantOfShape cannot hold a bfloat16: torch.full in float32 cast to bfloat16 (finfo(bfloat16).min
    is exact in float32; float16 keeps its own full()), and the int64 attention_mask cast to the type
    before the add, as type promotion does. Without an attention_mask (called with none) the mask is causal only, with
    T + 1 key columns as 4.42 sizes it (`past_seen_tokens + sequence_length + 1`), sliced to the keys
    in the attention."""
    dtype = input_tensor.dtype
    min_dtype = torch.finfo(dtype).min
    sequence_length = input_tensor.shape[1]
    target_length = attention_mask.shape[-1] if attention_mask is not None else sequence_length + 1
    full_dtype = torch.float32 if dtype == torch.bfloat16 else dtype
    causal_mask = torch.full((sequence_length, target_length), fill_value=min_dtype, dtype=full_dtype).to(dtype)
    if sequence_length != 1:
        causal_mask = torch.triu(causal_mask, diagonal=1)
    causal_mask *= torch.arange(target_length) > cache_position.reshape(-1, 1)
    causal_mask = causal_mask[None, None, :, :].expand(input_tensor.shape[0], 1, -1, -1)
    if attention_mask is not None:
        causal_mask = causal_mask.clone()  # copy to contiguous memory for the in-place edit
        mask_length = attention_mask.shape[-1]
        padding_mask = causal_mask[:, :, :, :mask_length] + attention_mask[:, None, None, :].to(dtype)
        padding_mask = padding_mask == 0
        causal_mask[:, :, :, :mask_length] = causal_mask[:, :, :, :mask_length].masked_fill(padding_mask,
                                                                                             min_dtype)
    return causal_mask


class Llama16BitAttention(nn.Module):
    """LLaMA's eager attention (hf_llama.LlamaAttention) with llama_mask_16bit:
    forward(x (B, T, 64), attention_mask int64 (B, T) or None) -> y."""

    def __init__(self, d_model=64, num_heads=4):
        super().__init__()
        self.self_attn = hf_llama.LlamaAttention(d_model, num_heads)

    def forward(self, x, attention_mask=None):
        cache_position = torch.arange(0, x.shape[1])
        return self.self_attn(x, llama_mask_16bit(attention_mask, x, cache_position))


@contextlib.contextmanager
def HalfReference():
    """16-bit GEMMs and softmax on the CPU as a GPU computes them: in float32, rounded once to the
    type (torch 1.13's CPU bfloat16 GEMM does not accumulate in float32)."""
    saved = torch.matmul, torch.addmm, nn.functional.linear, nn.functional.softmax

    def half_op(op):
        def run(*args, **kw):
            dtype = next((a.dtype for a in args if isinstance(a, torch.Tensor)
                          and a.dtype in (torch.float16, torch.bfloat16)), None)
            if dtype is not None:
                args = [a.float() if isinstance(a, torch.Tensor) else a for a in args]
                return op(*args, **kw).to(dtype)
            return op(*args, **kw)
        return run

    def softmax(x, dim=None, dtype=None, **kw):
        if x.dtype in (torch.float16, torch.bfloat16) and dtype is None:
            return saved[3](x.float(), dim=dim, **kw).to(x.dtype)
        return saved[3](x, dim=dim, dtype=dtype, **kw)

    torch.matmul, torch.addmm, nn.functional.linear = (half_op(op) for op in saved[:3])
    nn.functional.softmax = softmax
    try:
        yield
    finally:
        torch.matmul, torch.addmm, nn.functional.linear, nn.functional.softmax = saved


def install_half_cpu_kernels():
    """CPU kernels for float16 mm, bmm, addmm and softmax, so that torch.onnx.export can trace a
    `.half()` model on the CPU. They replace aten's kernels for every type in this process, so the
    export runs in a process of its own (catalog_precision.trace_fp16); the values they give never
    reach a graph (constant folding runs on the ONNX graph) and the references come from
    HalfReference."""
    lib = torch.library.Library("aten", "IMPL", "CPU")

    def mm(a, b):
        return (a.float()[:, :, None] * b.float()[None]).sum(1).to(a.dtype)

    def bmm(a, b):
        return (a.float()[:, :, :, None] * b.float()[:, None]).sum(2).to(a.dtype)

    def addmm(bias, a, b, beta=1, alpha=1):
        return (bias.float() * beta + mm(a.float(), b.float()) * alpha).to(a.dtype)

    def softmax(x, dim, half_to_float):
        y = x.float()
        y = (y - y.amax(dim, keepdim=True)).exp()
        y = y / y.sum(dim, keepdim=True)
        return y if half_to_float else y.to(x.dtype)

    for name, fn in (("mm", mm), ("bmm", bmm), ("addmm", addmm), ("_softmax", softmax)):
        lib.impl(name, fn)
    return lib
