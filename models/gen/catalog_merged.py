"""Attention with the heads merged into the batch (forms_merged.py): Hugging Face OPT, BART and
Whisper's torch.bmm on (B*H, T, D), openai-whisper's 4-D form, and two traps that swap B and H."""
import numpy as np

import forms_merged as M
from catalog_negative import neg
from spec import ModelSpec, block

D_MODEL, HEADS, CTX = 64, 4, 64
HEAD_DIM = D_MODEL // HEADS
PAST, NEW = 5, 3

BMM = ("query_states = q_proj(h) * D**-0.5 before the head split, _shape = view(B, T, 4, 16)"
       ".transpose(1, 2), view(B*4, -1, 16), torch.bmm(q, k.transpose(1, 2))")
OPT_MASK = ("the decoder's 4-D mask: _make_causal_mask (full(finfo.min), masked_fill(arange < "
            "arange + 1, 0)) + _expand_mask(attention_mask) ((1 - m) masked_fill finfo.min), "
            "added to attn_weights.view(B, 4, T, S), then torch.max(w, finfo.min), view(B*4, T, S)")
BART_TAIL = ("softmax(-1), bmm with v, view(B, 4, T, 16), transpose(1, 2), reshape(B, T, 64), "
             "out_proj")


def blocks(*masks):
    return [block(m, HEADS, HEAD_DIM) for m in masks]


def padded(total, pad, left):
    m = np.ones((2, total), dtype=np.int64)
    if left:
        m[1, :pad] = 0
    else:
        m[1, total - pad:] = 0
    return m


def normal(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def seq(*names):
    return {n: {0: "batch", 1: s} for n, s in names}


def opt_prefill(name, opset, seed, trap=None, extra=None, expected=1):
    def inputs(module, rng):
        return {"hidden_states": normal(rng, 2, 11, D_MODEL), "attention_mask": padded(11, 2, True)}
    trap_text = {None: "", "keys_hb": " NEGATIVE: the keys are merged from (H, B) "
                 "(key_states.transpose(0, 1).reshape(B*4, -1, 16)) while the queries are merged "
                 "from (B, H), so each query meets another sequence's or head's keys; the heads must "
                 "not be unmerged and the block must not fuse.",
                 "view_hb": " NEGATIVE: the scores are viewed as (4, B, T, S) (swapped) and the "
                 "padding attention_mask[:, 0][None] is added along that invented B axis; the heads "
                 "must not be unmerged and the block must not fuse."}[trap]
    return ModelSpec(
        name=name,
        description=(f"Hugging Face OPT decoder self-attention (OPTAttention, eager, 4.30-4.40), d_model "
                     f"{D_MODEL}, 4 heads of 16: {BMM}; {OPT_MASK}; {BART_TAIL}. Inputs hidden_states "
                     f"and attention_mask int64 (B, T), sample T 11, row 1 left-padded by 2.{trap_text}"),
        build=lambda: M.OPTSelfAttention(D_MODEL, HEADS, trap=trap), make_inputs=inputs,
        input_names=["hidden_states", "attention_mask"], output_names=["y"],
        dynamic_axes=seq(("hidden_states", "seq"), ("attention_mask", "seq"), ("y", "seq")),
        attention_blocks=blocks("causal+padding" if trap is None else "explicit"),
        expected_fusions=expected, opset=opset, seed=seed, extra=extra or {})


def opt_decode_inputs(module, rng):
    return {"hidden_states": normal(rng, 2, NEW, D_MODEL), "attention_mask": padded(PAST + NEW, 2, True),
            "past_key": normal(rng, 2, HEADS, PAST, HEAD_DIM),
            "past_value": normal(rng, 2, HEADS, PAST, HEAD_DIM)}


def cache_axes(suffixes=("",)):
    axes = {"hidden_states": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total_seq"},
            "y": {0: "batch", 1: "seq"}}
    for x in suffixes:
        axes.update({f"past_key{x}": {0: "batch", 2: "past_seq"}, f"past_value{x}": {0: "batch", 2: "past_seq"},
                     f"present_key{x}": {0: "batch", 2: "total_seq"},
                     f"present_value{x}": {0: "batch", 2: "total_seq"}})
    return axes


LAYER_SUFFIXES = ("_0", "_1")


def opt_decode_layers_inputs(module, rng):
    inputs = {"hidden_states": normal(rng, 2, NEW, D_MODEL), "attention_mask": padded(PAST + NEW, 2, True)}
    for x in LAYER_SUFFIXES:
        inputs[f"past_key{x}"] = normal(rng, 2, HEADS, PAST, HEAD_DIM)
        inputs[f"past_value{x}"] = normal(rng, 2, HEADS, PAST, HEAD_DIM)
    return inputs


DECODE_FUSES = ("The causal part's key length is past_seq + seq and the padding's is attention_mask's own "
                "total_seq (as the presents are declared): their sum gives the masked 4-D scores an unknown "
                "last dim, and unmerge_heads views them back to (B, 4, T, past_seq + seq) before the softmax, "
                "which makes the check the view to (B*4, T, S) made. The mask proof evaluates that view with "
                "the mask steps, with attention_mask of past_seq + seq keys and of 1 key (broadcast to every "
                "key, as ONNX broadcasts it): fused as causal + padding with key_padding_length "
                "broadcast_viewed.")


def bart_encoder(name, opset, seed):
    def inputs(module, rng):
        return {"hidden_states": normal(rng, 2, 12, D_MODEL), "attention_mask": padded(12, 3, False)}
    return ModelSpec(
        name=name,
        description=(f"Hugging Face BART encoder self-attention (BartAttention, eager, 4.30-4.40), d_model "
                     f"{D_MODEL}, 4 heads of 16: {BMM}; _expand_mask(attention_mask) added to "
                     f"attn_weights.view(B, 4, T, T) (no causal part, no clamp), view(B*4, T, T); "
                     f"{BART_TAIL}. Sample T 12, row 1 right-padded by 3."),
        build=lambda: M.BartEncoderSelfAttention(D_MODEL, HEADS), make_inputs=inputs,
        input_names=["hidden_states", "attention_mask"], output_names=["y"],
        dynamic_axes=seq(("hidden_states", "seq"), ("attention_mask", "seq"), ("y", "seq")),
        attention_blocks=blocks("padding"), expected_fusions=1, opset=opset, seed=seed)


def bart_decoder(name, opset, seed):
    def inputs(module, rng):
        return {"hidden_states": normal(rng, 2, 9, D_MODEL), "attention_mask": padded(9, 2, False),
                "encoder_hidden_states": normal(rng, 2, 13, D_MODEL),
                "encoder_attention_mask": padded(13, 4, False)}
    return ModelSpec(
        name=name,
        description=(f"Hugging Face BART decoder layer's two attentions (BartAttention, eager, 4.30-4.40), "
                     f"d_model {D_MODEL}, 4 heads of 16, residuals between them: self-attention with "
                     f"{BMM} behind _make_causal_mask + _expand_mask(attention_mask) (no clamp), and "
                     f"cross-attention of the same code with keys and values from encoder_hidden_states "
                     f"(another length S) behind _expand_mask(encoder_attention_mask, tgt_len=T); "
                     f"{BART_TAIL}. Sample T 9 (row 1 right-padded by 2), S 13 (row 1 right-padded by 4)."),
        build=lambda: M.BartDecoderAttention(D_MODEL, HEADS), make_inputs=inputs,
        input_names=["hidden_states", "attention_mask", "encoder_hidden_states", "encoder_attention_mask"],
        output_names=["y"],
        dynamic_axes=seq(("hidden_states", "seq"), ("attention_mask", "seq"), ("y", "seq"),
                         ("encoder_hidden_states", "encoder_seq"), ("encoder_attention_mask", "encoder_seq")),
        attention_blocks=blocks("causal+padding", "padding"), expected_fusions=2, opset=opset, seed=seed)


def whisper_decoder(name, opset, seed):
    def inputs(module, rng):
        return {"hidden_states": normal(rng, 2, 7, D_MODEL),
                "encoder_hidden_states": normal(rng, 2, 15, D_MODEL)}
    return ModelSpec(
        name=name,
        description=(f"Hugging Face Whisper decoder layer's two attentions (WhisperAttention, copied from "
                     f"BART, k_proj without bias; eager, 4.30-4.40), d_model {D_MODEL}, 4 heads of 16: "
                     f"{BMM}; self-attention behind _make_causal_mask alone (no attention_mask), then "
                     f"cross-attention over encoder_hidden_states (another length S, no mask); "
                     f"{BART_TAIL}. Sample T 7, S 15."),
        build=lambda: M.WhisperDecoderAttention(D_MODEL, HEADS), make_inputs=inputs,
        input_names=["hidden_states", "encoder_hidden_states"], output_names=["y"],
        dynamic_axes=seq(("hidden_states", "seq"), ("y", "seq"), ("encoder_hidden_states", "encoder_seq")),
        attention_blocks=blocks("causal", "none"), expected_fusions=2, opset=opset, seed=seed)


def openai_whisper_decoder(name, opset, seed):
    def inputs(module, rng):
        return {"x": normal(rng, 2, 10, D_MODEL), "xa": normal(rng, 2, 15, D_MODEL)}
    return ModelSpec(
        name=name,
        description=(f"openai-whisper's ResidualAttentionBlock with cross-attention (whisper/model.py, "
                     f"norms left out), n_state {D_MODEL}, 4 heads of 16, n_ctx {CTX}: qkv_attention "
                     f"scales q = view(B, T, 4, 16).permute(0, 2, 1, 3) and k = view(...).permute(0, 2, 3, 1) "
                     f"each by 16 ** -0.25, qk = q @ k, self-attention adds the buffer mask = "
                     f"empty(64, 64).fill_(-inf).triu_(1) sliced [:T, :T], qk.float(), softmax(-1)"
                     f".to(q.dtype), (w @ v).permute(0, 2, 1, 3).flatten(2); cross-attention over the "
                     f"audio features xa (another length S, no mask). Sample T 10, S 15."),
        build=lambda: M.OpenAIWhisperDecoderBlock(D_MODEL, HEADS, CTX), make_inputs=inputs,
        input_names=["x", "xa"], output_names=["y"],
        dynamic_axes=seq(("x", "seq"), ("y", "seq"), ("xa", "encoder_seq")),
        attention_blocks=blocks("causal", "none"), expected_fusions=2, opset=opset, seed=seed)


def whisper_encoder(name, opset, seed):
    def inputs(module, rng):
        return {"hidden_states": normal(rng, 2, 14, D_MODEL)}
    return ModelSpec(
        name=name,
        description=(f"Hugging Face Whisper encoder self-attention (WhisperAttention, eager, 4.30-4.40), "
                     f"d_model {D_MODEL}, 4 heads of 16: {BMM}; no mask; {BART_TAIL}. Sample T 14."),
        build=lambda: M.WhisperEncoderSelfAttention(D_MODEL, HEADS), make_inputs=inputs,
        input_names=["hidden_states"], output_names=["y"],
        dynamic_axes=seq(("hidden_states", "seq"), ("y", "seq")),
        attention_blocks=blocks("none"), expected_fusions=1, opset=opset, seed=seed)


SPECS = [
    opt_prefill("merged_opt_prefill", 17, 61),
    opt_prefill("merged_opt_prefill_op13", 13, 61),
    opt_prefill("merged_opt_prefill_op14", 14, 61),
    ModelSpec(
        name="merged_opt_decode",
        description=(f"As merged_opt_prefill with the legacy cache: past_key, past_value (B, 4, past, 16) "
                     f"concatenated on axis 2 to the new keys and values before the view to (B*4, -1, 16), "
                     f"returned as present_key, present_value; the causal part written with "
                     f"cat(zeros(T, past), mask). Sample T {NEW}, past {PAST}, attention_mask (2, "
                     f"{PAST + NEW}) row 1 left-padded by 2. {DECODE_FUSES}"),
        build=lambda: M.OPTSelfAttention(D_MODEL, HEADS, past=True), make_inputs=opt_decode_inputs,
        input_names=["hidden_states", "attention_mask", "past_key", "past_value"],
        output_names=["y", "present_key", "present_value"], dynamic_axes=cache_axes(),
        attention_blocks=blocks("causal+padding"), expected_fusions=1, opset=17, seed=62),
    ModelSpec(
        name="merged_opt_decode_2layers",
        description=(f"Two layers of merged_opt_decode behind one decoder mask, the second reading the "
                     f"first's output, each with its legacy cache past_key_N, past_value_N (B, 4, past, 16) "
                     f"and presents. Sample T {NEW}, past {PAST}, attention_mask (2, {PAST + NEW}) row 1 "
                     f"left-padded by 2. {DECODE_FUSES}"),
        build=lambda: M.OPTDecodeLayers(D_MODEL, HEADS, len(LAYER_SUFFIXES)), make_inputs=opt_decode_layers_inputs,
        input_names=["hidden_states", "attention_mask"] + [f"past_{kv}{x}" for x in LAYER_SUFFIXES
                                                           for kv in ("key", "value")],
        output_names=["y"] + [f"present_{kv}{x}" for x in LAYER_SUFFIXES for kv in ("key", "value")],
        dynamic_axes=cache_axes(LAYER_SUFFIXES), attention_blocks=blocks("causal+padding", "causal+padding"),
        expected_fusions=2, opset=17, seed=70),
    bart_encoder("merged_bart_encoder", 17, 63),
    bart_encoder("merged_bart_encoder_op13", 13, 63),
    bart_decoder("merged_bart_decoder", 17, 64),
    bart_decoder("merged_bart_decoder_op14", 14, 64),
    whisper_encoder("merged_whisper_encoder", 17, 65),
    whisper_decoder("merged_whisper_decoder", 17, 66),
    whisper_decoder("merged_whisper_decoder_op13", 13, 66),
    openai_whisper_decoder("forms_openai_whisper_decoder", 17, 67),
    openai_whisper_decoder("forms_openai_whisper_decoder_op14", 14, 67),
    opt_prefill("negative/merged_keys_hb", 17, 68, trap="keys_hb", expected=0,
                extra=neg("heads_order", False)),
    opt_prefill("negative/merged_view_hb", 17, 69, trap="view_hb", expected=0,
                extra=neg("heads_order", False)),
]
