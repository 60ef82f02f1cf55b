"""Mistral's sliding window combined with padding (hf_mistral.py), at windows of 4, 16, 64 and 128,
each sampled at a length beyond its window, in each way the versions write the window."""
import numpy as np
import torch

import hf_mistral
from spec import SEQ, ModelSpec, block

D_MODEL, HEADS, KV_HEADS = 64, 4, 2
HEAD_DIM = D_MODEL // HEADS
PAD = 3                 # batch row 0 left-padded, batch row 1 right-padded, by PAD tokens
PAST, NEW = 9, 3


def padding(total):
    """int64 (2, total): row 0 left-padded, row 1 right-padded."""
    mask = np.ones((2, total), dtype=np.int64)
    mask[0, :PAD] = 0
    mask[1, total - PAD:] = 0
    return mask


def prefill_inputs(num_tokens):
    def make(module, rng):
        return {"x": rng.standard_normal((2, num_tokens, D_MODEL)).astype(np.float32),
                "attention_mask": padding(num_tokens)}
    return make


def decode_inputs(module, rng):
    """past_key/past_value are the presents of a real PAST-token prefix with the same padding."""
    total = PAST + NEW
    mask = padding(total)
    prefix = torch.from_numpy(rng.standard_normal((2, PAST, D_MODEL)).astype(np.float32))
    with torch.no_grad():
        _, k, v = module(prefix, torch.from_numpy(mask[:, :PAST].copy()))
    return {"x": rng.standard_normal((2, NEW, D_MODEL)).astype(np.float32), "attention_mask": mask,
            "past_key": k.numpy().copy(), "past_value": v.numpy().copy()}


def describe(window, form, num_tokens):
    seen = hf_mistral.SEEN_KEYS[form](window)
    return (f"Mistral attention as Hugging Face writes it (d_model {D_MODEL}, {HEADS} query heads and "
            f"{KV_HEADS} K/V heads of {HEAD_DIM}, repeat_kv), sliding_window {window} written the "
            f"'{form}' way (a query sees itself and the {seen - 1} keys before it), combined with the "
            f"padding of the attention_mask input by AttentionMaskConverter.to_4d. Sample: T {num_tokens} "
            f"(beyond the window), batch row 0 left-padded and row 1 right-padded by {PAD}.")


def window_spec(window, form, num_tokens, seed, opset=17):
    seen = hf_mistral.SEEN_KEYS[form](window)
    return ModelSpec(name=f"hf_mistral_window{window}_{form}", description=describe(window, form, num_tokens),
                     build=lambda: hf_mistral.MistralWindowAttention(D_MODEL, HEADS, KV_HEADS, window, form),
                     make_inputs=prefill_inputs(num_tokens), input_names=["x", "attention_mask"],
                     output_names=["y"], dynamic_axes={"x": SEQ, "attention_mask": SEQ, "y": SEQ},
                     attention_blocks=[block("window+padding", HEADS, HEAD_DIM, KV_HEADS, window=seen)],
                     expected_fusions=1, seed=seed, opset=opset)


CACHE_AXES = {"x": SEQ, "y": SEQ, "attention_mask": {0: "batch", 1: "total_seq"},
              "past_key": {0: "batch", 2: "past_seq"}, "past_value": {0: "batch", 2: "past_seq"},
              "present_key": {0: "batch", 2: "total_seq"}, "present_value": {0: "batch", 2: "total_seq"}}

SPECS = [
    window_spec(4, "triu", 13, 61, opset=14),
    window_spec(16, "tril", 24, 62),
    window_spec(64, "range", 80, 63, opset=13),
    window_spec(128, "tril", 140, 64),
    ModelSpec(name="hf_mistral_window4_decode",
              description=describe(4, "tril", NEW) + f" KV cache: past_key/past_value (B, {KV_HEADS}, past, "
              f"{HEAD_DIM}) concatenated before the new K/V, present_key/present_value returned; the "
              f"window is bottom-right aligned with the past. Sample: past {PAST}, T {NEW}, attention_mask "
              f"(B, past + T).",
              build=lambda: hf_mistral.MistralWindowAttention(D_MODEL, HEADS, KV_HEADS, 4, "tril", cache=True),
              make_inputs=decode_inputs, input_names=["x", "attention_mask", "past_key", "past_value"],
              output_names=["y", "present_key", "present_value"], dynamic_axes=CACHE_AXES,
              attention_blocks=[block("window+padding", HEADS, HEAD_DIM, KV_HEADS, window=5)],
              expected_fusions=1, seed=65, extra={"past_length": PAST}),
]

import hf_gemma2  # noqa: E402

GEMMA_T = 13
SPECS.append(
    ModelSpec(name="hf_gemma2_softcap_window",
              description=f"Two Gemma 2 attention blocks as Hugging Face writes them (d_model {D_MODEL}, {HEADS} heads "
              f"of {HEAD_DIM}): scores times query_pre_attn_scalar ** -0.5 (24), soft-capped tanh(w / 50) * 50, plus "
              "the 4-D causal + padding mask of _update_causal_mask; the first (sliding) layer also hides keys 4 or "
              "more back by where(tril(ones_like(mask, bool), -4), finfo.min, mask). Sample: T "
              f"{GEMMA_T}, batch row 0 left-padded and row 1 right-padded by {PAD}.",
              build=lambda: hf_gemma2.Gemma2Layers(D_MODEL, HEADS), make_inputs=prefill_inputs(GEMMA_T),
              input_names=["x", "attention_mask"], output_names=["y"],
              dynamic_axes={"x": SEQ, "attention_mask": SEQ, "y": SEQ},
              attention_blocks=[block("window+padding", HEADS, HEAD_DIM, window=4, scale=24.0 ** -0.5),
                                block("causal+padding", HEADS, HEAD_DIM, scale=24.0 ** -0.5)],
              expected_fusions=2, seed=66))
