"""Negative models (models/negative/<name>/): the causal fusion must NOT fire on them."""
import numpy as np

import torch

import negatives as N
from catalog_attention import CTX, D_MODEL, HEAD_DIM, HEADS, mha
from spec import SEQ, ModelSpec, block, xy_spec

VOCAB, PAD_ID = 31, 1
PAST, NEW = 6, 4



def neg(trap, explicit_ok):
    """model.json keys of a negative: the causal fusion must not fire; `trap` names the check
    that must fail; `explicit_fusion_allowed`: fusing with an explicit mask would be correct."""
    return {"expected_causal_fusions": 0, "negative": True, "trap": trap,
            "explicit_fusion_allowed": explicit_ok}


def negative(name, cls, description, seed, num_tokens, trap, mask="explicit"):
    return xy_spec(f"negative/{name}", "NEGATIVE. " + description, mha(cls), D_MODEL,
                   num_tokens, [block(mask, HEADS, HEAD_DIM)], 0, seed=seed,
                   extra=neg(trap, mask == "explicit"))


def padding_inputs(module, rng):
    x = rng.standard_normal((2, 11, D_MODEL)).astype(np.float32)
    keep = np.ones((2, 11), dtype=bool)
    keep[1, 7:] = False                       # second sequence: last 4 keys are padding
    return {"x": x, "attention_mask": keep}


def pad_id_inputs(module, rng):
    ids = rng.randint(2, VOCAB, size=(2, 11)).astype(np.int64)
    ids[0, :3] = PAD_ID                       # left padding written as pad ids
    ids[1, 8:] = PAD_ID                       # right padding
    return {"input_ids": ids}


def top_left_cache_inputs(module, rng):
    shape = (2, HEADS, PAST, HEAD_DIM)
    return {"x": rng.standard_normal((2, NEW, D_MODEL)).astype(np.float32),
            "past_key": rng.standard_normal(shape).astype(np.float32),
            "past_value": rng.standard_normal(shape).astype(np.float32)}


CACHE_AXES = {"x": SEQ, "y": SEQ, "past_key": {0: "batch", 2: "past_seq"},
              "past_value": {0: "batch", 2: "past_seq"}, "present_key": {0: "batch", 2: "total_seq"},
              "present_value": {0: "batch", 2: "total_seq"}}

SPECS = [
    negative("noncausal_const_mask", N.NonCausalConstMask,
             "The bool mask buffer (64x64, sliced [:T,:T], masked_fill -inf) is triu(1) with "
             "~4% of its entries flipped at random (diagonal kept): constant and shaped like a "
             "causal mask, but not causal at the sample T nor at the full buffer length. A "
             "correct engine may fuse it only as an explicit mask.", 21, 11, "mask_not_causal"),
    negative("anticausal_mask", N.AntiCausalMask,
             "The mask buffer is tril(ones, -1) instead of triu(ones, 1): it blocks the past "
             "and keeps the future (mirror image of causal). Same ops as mha_causal; only the "
             "constant differs.", 22, 11, "mask_anticausal"),
    # Once a negative (a mask read from an input is not causal); now the
    # positive it is: causal plus key padding, fused reading the input.
    ModelSpec(name="mha_padding_input",
              description="The triu(1) causal buffer OR'ed with ~attention_mask, a bool (B,T) key-padding "
              "model input (True = real token), then masked_fill(-inf). The mask depends on input data: it "
              "is causal plus key padding, which the fusion proves by evaluating it with padding patterns "
              "and fuses reading attention_mask itself. Sample: batch 1 has its last 4 keys padded.",
              build=mha(N.PaddingMaskInput), make_inputs=padding_inputs,
              input_names=["x", "attention_mask"], output_names=["y"],
              dynamic_axes={"x": SEQ, "attention_mask": SEQ, "y": SEQ},
              attention_blocks=[block("causal+padding", HEADS, HEAD_DIM)], expected_fusions=1, seed=23),
    negative("softmax_wrong_axis", N.SoftmaxWrongAxis,
             "Exact causal mask and 1/√D scale, but Softmax over axis -2 (the query axis), so "
             "this is not attention; no attention fusion may fire.", 24, 11, "softmax_axis",
             mask="causal"),
    negative("scale_from_input", N.ScaleFromInput,
             "Exact causal mask, but the scores are divided by x.abs().max() (ReduceMax of the "
             "input data), not a constant; a fused op with a constant scale would be wrong.",
             25, 11, "scale_not_constant", mask="causal"),
    negative("shifted_causal_mask", N.ShiftedCausalMask,
             "The mask buffer is triu(ones, 2) instead of triu(ones, 1): the causal mask shifted by "
             "one, so each query also sees the next key. Same ops as mha_causal.", 26, 11,
             "mask_not_causal"),
    negative("triu_window_mask", N.TriuWindowMask,
             "A window of 4 written with triu(-4) where tril(-4) was meant: causal | triu(ones, -4) "
             "hides the last 5 keys of every row and keeps the older ones; masked_fill(finfo.min), "
             "so rows 0-4 (every key hidden) average V. Sampled at T 13, beyond the window.", 27, 13,
             "mask_not_causal"),
    ModelSpec(name="negative/pad_id_mask",
              description="NEGATIVE. Token embeddings (vocab 31) into the causal attention of mha_causal, "
              "with keys also hidden where input_ids == 1 (OPT's pad id) by masked_fill(finfo.min): "
              "the mask reads token values, not a 0/1 attention_mask, so it is not causal plus padding. "
              "Sample: batch row 0 starts with 3 pad ids, row 1 ends with 3.",
              build=lambda: N.PadIdMask(VOCAB, D_MODEL, D_MODEL, CTX, HEADS, pad_id=PAD_ID),
              make_inputs=pad_id_inputs, input_names=["input_ids"], output_names=["y"],
              dynamic_axes={"input_ids": SEQ, "y": SEQ}, attention_blocks=[block("explicit", HEADS, HEAD_DIM)],
              expected_fusions=0, seed=28, extra=neg("mask_not_causal", True)),
    ModelSpec(name="negative/top_left_cache_mask",
              description="NEGATIVE. A KV cache (past_key/past_value (B, 4, past, 16) concatenated before "
              "the new K/V) whose causal mask is aligned top-left, triu(ones(T, past + T), 1), so query i "
              "sees keys 0..i only; the causal mask of a cache is bottom-right aligned. Sample: past 6, T 4.",
              build=mha(N.TopLeftCacheMask), make_inputs=top_left_cache_inputs,
              input_names=["x", "past_key", "past_value"], output_names=["y", "present_key", "present_value"],
              dynamic_axes=CACHE_AXES, attention_blocks=[block("explicit", HEADS, HEAD_DIM)],
              expected_fusions=0, seed=29, extra=neg("mask_not_causal", True)),
]
