"""Attention with the heads merged into the batch: the eager code of Hugging Face OPT, BART and
Whisper (transformers 4.30-4.40), and openai-whisper's 4-D form with the scale on q and k.

The Hugging Face modules follow OPTAttention / BartAttention / WhisperAttention line by line:
`query_states = q_proj(h) * scaling` before the head split, `_shape` = view(bsz, seq, H, D)
.transpose(1, 2).contiguous(), `proj_shape = (bsz * H, -1, D)`, `torch.bmm(q, k.transpose(1, 2))`,
with a mask `attn_weights.view(bsz, H, tgt, src) + attention_mask` (OPT then clamps with
`torch.max(attn_weights, torch.tensor(finfo.min))`) viewed back to (bsz * H, tgt, src), softmax,
dropout, bmm with v, view (bsz, H, tgt, D), transpose(1, 2), reshape (bsz, tgt, embed), out_proj.
The 4-D masks come from `_make_causal_mask` and `_expand_mask` (modeling_opt / modeling_bart 4.30).

The traps write the same code with the batch and head axes swapped in one place: the keys merged
from (H, B) instead of (B, H) (each query meets another sequence's keys), and the scores viewed
back as (H, B, tgt, src) with the padding added along the B that view invents.
"""
import torch
from torch import nn


def make_causal_mask(input_ids_shape, dtype, past_key_values_length=0):
    """modeling_opt/modeling_bart `_make_causal_mask` (4.30)."""
    bsz, tgt_len = input_ids_shape
    mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min)
    mask_cond = torch.arange(mask.size(-1))
    mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    mask = mask.to(dtype)
    if past_key_values_length > 0:
        mask = torch.cat([torch.zeros(tgt_len, past_key_values_length, dtype=dtype), mask], dim=-1)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_key_values_length)


def expand_mask(mask, dtype, tgt_len=None):
    """modeling_opt/modeling_bart `_expand_mask` (4.30): (bsz, src) -> (bsz, 1, tgt, src)."""
    bsz, src_len = mask.size()
    tgt_len = tgt_len if tgt_len is not None else src_len
    expanded_mask = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    inverted_mask = 1.0 - expanded_mask
    return inverted_mask.masked_fill(inverted_mask.to(torch.bool), torch.finfo(dtype).min)


def prepare_decoder_attention_mask(attention_mask, input_shape, dtype, past_key_values_length):
    """OPTDecoder/BartDecoder `_prepare_decoder_attention_mask` (4.30)."""
    combined_attention_mask = None
    if input_shape[-1] > 1:
        combined_attention_mask = make_causal_mask(input_shape, dtype, past_key_values_length)
    if attention_mask is not None:
        expanded_attn_mask = expand_mask(attention_mask, dtype, tgt_len=input_shape[-1])
        combined_attention_mask = (expanded_attn_mask if combined_attention_mask is None
                                   else expanded_attn_mask + combined_attention_mask)
    return combined_attention_mask


class BmmAttention(nn.Module):
    """OPTAttention / BartAttention / WhisperAttention (eager, 4.30-4.40).

    `clamp`: OPT's torch.max(attn_weights, finfo.min) after the mask. `k_bias`: Whisper's k_proj
    has no bias. `trap`: None, "keys_hb" (keys merged from (H, B)) or "view_hb" (the masked scores
    viewed as (H, B, tgt, src), the mask added along that B)."""

    def __init__(self, embed_dim, num_heads, clamp=False, k_bias=True, trap=None):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.clamp = clamp
        self.trap = trap
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=k_bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, hidden_states, key_value_states=None, past_key_value=None, attention_mask=None):
        is_cross_attention = key_value_states is not None
        bsz, tgt_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states) * self.scaling
        if is_cross_attention:
            key_states = self._shape(self.k_proj(key_value_states), -1, bsz)
            value_states = self._shape(self.v_proj(key_value_states), -1, bsz)
        elif past_key_value is not None:
            key_states = self._shape(self.k_proj(hidden_states), -1, bsz)
            value_states = self._shape(self.v_proj(hidden_states), -1, bsz)
            key_states = torch.cat([past_key_value[0], key_states], dim=2)
            value_states = torch.cat([past_key_value[1], value_states], dim=2)
        else:
            key_states = self._shape(self.k_proj(hidden_states), -1, bsz)
            value_states = self._shape(self.v_proj(hidden_states), -1, bsz)
        present = (key_states, value_states)

        proj_shape = (bsz * self.num_heads, -1, self.head_dim)
        query_states = self._shape(query_states, tgt_len, bsz).view(*proj_shape)
        if self.trap == "keys_hb":
            key_states = key_states.transpose(0, 1).reshape(*proj_shape)
        else:
            key_states = key_states.view(*proj_shape)
        value_states = value_states.view(*proj_shape)

        src_len = key_states.size(1)
        attn_weights = torch.bmm(query_states, key_states.transpose(1, 2))
        if attention_mask is not None:
            if self.trap == "view_hb":
                # the padding of attention_mask (bsz, 1, tgt, src) read along the invented B axis
                attn_weights = attn_weights.view(self.num_heads, bsz, tgt_len, src_len) + \
                    attention_mask[:, 0][None]
            else:
                attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len) + attention_mask
            if self.clamp:
                attn_weights = torch.max(attn_weights, torch.tensor(torch.finfo(attn_weights.dtype).min))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_probs = nn.functional.dropout(attn_weights, p=0.0, training=self.training)
        attn_output = torch.bmm(attn_probs, value_states)
        attn_output = attn_output.view(bsz, self.num_heads, tgt_len, self.head_dim)
        attn_output = attn_output.transpose(1, 2)
        attn_output = attn_output.reshape(bsz, tgt_len, self.embed_dim)
        return self.out_proj(attn_output), present


class OPTSelfAttention(nn.Module):
    """One OPT decoder self-attention behind the decoder's 4-D mask (causal + padding); with
    `past`, the legacy cache (bsz, H, past, D) concatenated before the view to 3-D."""

    def __init__(self, embed_dim, num_heads, past=False, trap=None):
        super().__init__()
        self.past = past
        self.self_attn = BmmAttention(embed_dim, num_heads, clamp=True, trap=trap)

    def forward(self, hidden_states, attention_mask, past_key=None, past_value=None):
        past_len = past_key.shape[2] if self.past else 0
        mask = prepare_decoder_attention_mask(attention_mask, hidden_states.shape[:2],
                                              hidden_states.dtype, past_len)
        past = (past_key, past_value) if self.past else None
        y, (k, v) = self.self_attn(hidden_states, past_key_value=past, attention_mask=mask)
        return (y, k, v) if self.past else y


class OPTDecodeLayers(nn.Module):
    """`layers` OPT self-attentions with the legacy cache behind one decoder mask, each reading the
    previous one's output (the decoder's layer loop without the norms and MLPs):
    forward(hidden_states, attention_mask, past_key_0, past_value_0, ...) -> (y, present_key_0,
    present_value_0, ...)."""

    def __init__(self, embed_dim, num_heads, layers):
        super().__init__()
        self.layers = nn.ModuleList(BmmAttention(embed_dim, num_heads, clamp=True) for _ in range(layers))

    def forward(self, hidden_states, attention_mask, *past):
        mask = prepare_decoder_attention_mask(attention_mask, hidden_states.shape[:2], hidden_states.dtype,
                                              past[0].shape[2])
        presents = []
        for n, layer in enumerate(self.layers):
            hidden_states, (k, v) = layer(hidden_states, past_key_value=(past[2 * n], past[2 * n + 1]),
                                          attention_mask=mask)
            presents += [k, v]
        return (hidden_states, *presents)


class BartEncoderSelfAttention(nn.Module):
    """BartEncoderLayer's self-attention: `_expand_mask(attention_mask)`, no causal part."""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.self_attn = BmmAttention(embed_dim, num_heads)

    def forward(self, hidden_states, attention_mask):
        mask = expand_mask(attention_mask, hidden_states.dtype)
        return self.self_attn(hidden_states, attention_mask=mask)[0]


class BartDecoderAttention(nn.Module):
    """BartDecoderLayer's two attentions: self-attention (causal + padding) and cross-attention
    over the encoder's hidden states (another length) with the encoder's padding, residuals
    between them as the layer writes them (no norms: they are not what is tested)."""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.self_attn = BmmAttention(embed_dim, num_heads)
        self.encoder_attn = BmmAttention(embed_dim, num_heads)

    def forward(self, hidden_states, attention_mask, encoder_hidden_states, encoder_attention_mask):
        input_shape = hidden_states.shape[:2]
        mask = prepare_decoder_attention_mask(attention_mask, input_shape, hidden_states.dtype, 0)
        cross_mask = expand_mask(encoder_attention_mask, hidden_states.dtype, tgt_len=input_shape[-1])
        h = hidden_states + self.self_attn(hidden_states, attention_mask=mask)[0]
        return h + self.encoder_attn(h, key_value_states=encoder_hidden_states,
                                     attention_mask=cross_mask)[0]


class WhisperEncoderSelfAttention(nn.Module):
    """WhisperEncoderLayer's self-attention (copied from BART, k_proj without bias): no mask."""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.self_attn = WhisperAttention(embed_dim, num_heads)

    def forward(self, hidden_states):
        return self.self_attn(hidden_states)[0]


def WhisperAttention(embed_dim, num_heads):
    return BmmAttention(embed_dim, num_heads, k_bias=False)


class WhisperDecoderAttention(nn.Module):
    """WhisperDecoderLayer's self-attention behind the decoder's causal mask (no attention_mask
    input: `_prepare_decoder_attention_mask(None, ...)` is `_make_causal_mask` alone), then
    cross-attention over the encoder's output (another length, no mask)."""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.self_attn = WhisperAttention(embed_dim, num_heads)
        self.encoder_attn = WhisperAttention(embed_dim, num_heads)

    def forward(self, hidden_states, encoder_hidden_states):
        mask = prepare_decoder_attention_mask(None, hidden_states.shape[:2], hidden_states.dtype, 0)
        h = hidden_states + self.self_attn(hidden_states, attention_mask=mask)[0]
        return h + self.encoder_attn(h, key_value_states=encoder_hidden_states)[0]


class OpenAIWhisperAttention(nn.Module):
    """openai-whisper's MultiHeadAttention (whisper/model.py): qkv_attention scales q and k by
    (D) ** -0.25 after the head split, `q @ k` on (B, H, T, D) x (B, H, D, S), `qk + mask[:n_ctx,
    :n_ctx]`, `qk.float()`, softmax(-1).to(q.dtype), `(w @ v).permute(0, 2, 1, 3).flatten(2)`."""

    def __init__(self, n_state, n_head):
        super().__init__()
        self.n_head = n_head
        self.query = nn.Linear(n_state, n_state)
        self.key = nn.Linear(n_state, n_state, bias=False)
        self.value = nn.Linear(n_state, n_state)
        self.out = nn.Linear(n_state, n_state)

    def forward(self, x, xa=None, mask=None):
        q = self.query(x)
        k = self.key(x if xa is None else xa)
        v = self.value(x if xa is None else xa)
        wv, qk = self.qkv_attention(q, k, v, mask)
        return self.out(wv), qk

    def qkv_attention(self, q, k, v, mask=None):
        n_batch, n_ctx, n_state = q.shape
        scale = (n_state // self.n_head) ** -0.25
        q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3) * scale
        k = k.view(*k.shape[:2], self.n_head, -1).permute(0, 2, 3, 1) * scale
        v = v.view(*v.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        qk = q @ k
        if mask is not None:
            qk = qk + mask[:n_ctx, :n_ctx]
        qk = qk.float()
        w = nn.functional.softmax(qk, dim=-1).to(q.dtype)
        return (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2), qk.detach()


class OpenAIWhisperDecoderBlock(nn.Module):
    """openai-whisper's ResidualAttentionBlock with cross_attention (norms left out): self-attention
    with the decoder's `mask = torch.empty(n_ctx, n_ctx).fill_(-inf).triu_(1)` buffer, then
    cross-attention over the audio features xa (another length, no mask)."""

    def __init__(self, n_state, n_head, n_ctx):
        super().__init__()
        self.attn = OpenAIWhisperAttention(n_state, n_head)
        self.cross_attn = OpenAIWhisperAttention(n_state, n_head)
        mask = torch.empty(n_ctx, n_ctx).fill_(-float("inf")).triu_(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x, xa):
        x = x + self.attn(x, mask=self.mask)[0]
        return x + self.cross_attn(x, xa)[0]
