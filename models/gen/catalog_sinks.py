"""Attention sinks as gpt-oss writes them (gpt_oss.py): sliding and full layers alternating, padding on
both sides, at opsets 13, 14 and 17, dynamic and static axes; and two traps that must not fuse."""
import numpy as np

import gpt_oss
from spec import SEQ, ModelSpec, block

D_MODEL, HEADS, KV_HEADS = 64, 4, 2
HEAD_DIM = D_MODEL // HEADS
WINDOW = 4
T = 13                  # beyond the window
PAD = 3                 # batch row 0 left-padded, batch row 1 right-padded


def inputs(module, rng):
    mask = np.ones((2, T), dtype=np.int64)
    mask[0, :PAD] = 0
    mask[1, T - PAD:] = 0
    return {"x": rng.standard_normal((2, T, D_MODEL)).astype(np.float32), "attention_mask": mask}


DYNAMIC = {"x": SEQ, "attention_mask": SEQ, "y": SEQ}
BLOCKS = [block("window+padding", HEADS, HEAD_DIM, KV_HEADS, window=WINDOW),
          block("causal+padding", HEADS, HEAD_DIM, KV_HEADS)]


def describe(extra):
    return (f"Two gpt-oss attention layers (d_model {D_MODEL}, {HEADS} query heads and {KV_HEADS} K/V heads of "
            f"{HEAD_DIM}, rotary, repeat_kv) with attention sinks: a learned logit per head concatenated after "
            f"the keys, {extra}, softmax, the sink column sliced off. Layer 0 slides a window of {WINDOW} keys, "
            f"layer 1 is full; the masking_utils mask (kv_arange against the query positions, the attention_mask "
            f"padding, torch.where(mask, 0, finfo.min)). Sample: T {T}, batch row 0 left-padded and row 1 "
            f"right-padded by {PAD}.")


def sinks_spec(name, seed, opset, dynamic=True, subtract_max=True, trap=None, expected=2, extra=None):
    what = "the row max subtracted" if subtract_max else "no row max subtracted"
    return ModelSpec(name=name, description=describe(what) + (" " + extra["note"] if extra else ""),
                     build=lambda: gpt_oss.GptOssLayers(D_MODEL, HEADS, KV_HEADS, WINDOW, subtract_max=subtract_max,
                                                        trap=trap),
                     make_inputs=inputs, input_names=["x", "attention_mask"], output_names=["y"],
                     dynamic_axes=DYNAMIC if dynamic else {}, attention_blocks=BLOCKS, expected_fusions=expected,
                     seed=seed, opset=opset,
                     extra={"sinks": True, **({k: v for k, v in extra.items() if k != "note"} if extra else {})})


PAST, NEW = 9, 3


def decode_inputs(module, rng):
    """past_key/past_value are the presents of a real PAST-token prefix with the same padding."""
    import torch
    total = PAST + NEW
    mask = np.ones((2, total), dtype=np.int64)
    mask[0, :PAD] = 0
    prefix = torch.from_numpy(rng.standard_normal((2, PAST, D_MODEL)).astype(np.float32))
    empty = torch.zeros((2, KV_HEADS, 0, HEAD_DIM))
    with torch.no_grad():
        _, k, v = module(prefix, torch.from_numpy(mask[:, :PAST].copy()), empty, empty)
    return {"x": rng.standard_normal((2, NEW, D_MODEL)).astype(np.float32), "attention_mask": mask,
            "past_key": k.numpy().copy(), "past_value": v.numpy().copy()}


CACHE_AXES = {"x": SEQ, "y": SEQ, "attention_mask": {0: "batch", 1: "total_seq"},
              "past_key": {0: "batch", 2: "past_seq"}, "past_value": {0: "batch", 2: "past_seq"},
              "present_key": {0: "batch", 2: "total_seq"}, "present_value": {0: "batch", 2: "total_seq"}}

TRAP = {"negative": True, "expected_causal_fusions": 0, "explicit_fusion_allowed": False}
SPECS = [
    sinks_spec("gpt_oss_sinks", 171, 17),
    sinks_spec("gpt_oss_sinks_static_op14", 172, 14, dynamic=False),
    sinks_spec("gpt_oss_sinks_op13", 173, 13, subtract_max=False),
    sinks_spec("negative/gpt_oss_trap_query_column", 174, 17, trap="query_column", expected=0,
               extra={**TRAP, "trap": "sink_not_per_head",
                      "note": "A trap: the concatenated column is the mean of each query row, not a per-head "
                              "constant; must not fuse."}),
    sinks_spec("negative/gpt_oss_trap_keeps_sink", 175, 17, trap="keeps_sink", expected=0,
               extra={**TRAP, "trap": "sink_slice_keeps_sink",
                      "note": "A trap: probs[..., 1:] drops the first key and keeps the sink column for P·V; must "
                              "not fuse."}),
]

SPECS.append(
    ModelSpec(name="gpt_oss_sinks_decode",
              description=f"One gpt-oss sliding-window layer (window {WINDOW}) with attention sinks and a KV cache: "
              f"past_key/past_value (B, {KV_HEADS}, past, {HEAD_DIM}) concatenated before the new K/V, the presents "
              f"returned, rotary positions and the window bottom-right aligned with the past. Sample: past {PAST}, "
              f"T {NEW}, attention_mask (B, past + T) with row 0 left-padded by {PAD}. The mask is built from the "
              "attention_mask's length alone, which the window proof's probes (a mask of another length than past "
              "+ T) do not bind: fused with the mask as an explicit input.",
              build=lambda: gpt_oss.GptOssDecode(D_MODEL, HEADS, KV_HEADS, WINDOW), make_inputs=decode_inputs,
              input_names=["x", "attention_mask", "past_key", "past_value"],
              output_names=["y", "present_key", "present_value"], dynamic_axes=CACHE_AXES,
              attention_blocks=[block("explicit", HEADS, HEAD_DIM, KV_HEADS, past=True)],
              expected_fusions=1, seed=176, extra={"sinks": True, "past_length": PAST}))
