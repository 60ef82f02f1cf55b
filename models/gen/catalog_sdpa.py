"""Attention through scaled_dot_product_attention as torch 2's exporter writes it (hf_sdpa.py)."""
import numpy as np

import hf_sdpa
from spec import SEQ, ModelSpec, block

D_MODEL, HEADS = 64, 4
HEAD_DIM = D_MODEL // HEADS
T = 11
SDPA = ("scaled_dot_product_attention as torch 2's ONNX exporter writes it (hf_sdpa.sdpa): the scale from "
        "Shape/Slice/Cast/Sqrt/Div, Q and Kᵀ each times sqrt(scale)")


def padded_inputs(module, rng):
    mask = np.ones((2, T), dtype=np.int64)
    mask[1, :3] = 0
    return {"x": rng.standard_normal((2, T, D_MODEL)).astype(np.float32), "attention_mask": mask}


def x_only(module, rng):
    return {"x": rng.standard_normal((2, T, D_MODEL)).astype(np.float32)}


def bool_mask_inputs(module, rng):
    keep = np.tril(np.ones((T, T), dtype=bool))[None, None].repeat(2, axis=0)
    keep[1, :, :, :2] = False
    keep[1, :, 0, 0] = True                  # every row keeps a key: no NaN rows
    keep[1, :, 1, 1] = True
    return {"x": rng.standard_normal((2, T, D_MODEL)).astype(np.float32), "attn_mask": keep}


SPECS = [
    ModelSpec(name="sdpa_llama_mask", description=f"Hugging Face LlamaSdpaAttention (4.38-4.47, no rotary "
              f"embedding; d_model {D_MODEL}, {HEADS} heads) with the 4-D mask of _update_causal_mask (triu(finfo.min), "
              f"padding written by ScatterND) passed to {SDPA}, the float mask added. Sample: T {T}, batch row 1 "
              "left-padded by 3.", build=lambda: hf_sdpa.LlamaSdpaMasked(D_MODEL, HEADS), make_inputs=padded_inputs,
              input_names=["x", "attention_mask"], output_names=["y"],
              dynamic_axes={"x": SEQ, "attention_mask": SEQ, "y": SEQ},
              attention_blocks=[block("causal+padding", HEADS, HEAD_DIM)], expected_fusions=1, seed=91),
    ModelSpec(name="sdpa_is_causal", description=f"{SDPA}, is_causal=True: ones(L, S), Trilu, Where(Equal(m, 0), "
              "-inf, 0) added; opset 14.", build=lambda: hf_sdpa.SdpaCausal(D_MODEL, HEADS), make_inputs=x_only,
              input_names=["x"], output_names=["y"], dynamic_axes={"x": SEQ, "y": SEQ},
              attention_blocks=[block("causal", HEADS, HEAD_DIM)], expected_fusions=1, seed=92, opset=14),
    ModelSpec(name="sdpa_bool_mask", description=f"{SDPA}, a bool attn_mask input (B, 1, T, T) made additive by "
              "Where(mask, 0, -inf). Sample: causal, with batch row 1's first 2 keys hidden from the rows after them.",
              build=lambda: hf_sdpa.SdpaBoolMask(D_MODEL, HEADS), make_inputs=bool_mask_inputs,
              input_names=["x", "attn_mask"], output_names=["y"],
              dynamic_axes={"x": SEQ, "attn_mask": {0: "batch", 2: "seq", 3: "seq"}, "y": SEQ},
              attention_blocks=[block("explicit", HEADS, HEAD_DIM)], expected_fusions=1, seed=93),
]
