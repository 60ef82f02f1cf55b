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
