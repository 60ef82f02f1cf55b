"""Negative models (models/negative/<name>/): the causal fusion must NOT fire on them."""
import numpy as np

import negatives as N
from catalog_attention import D_MODEL, HEAD_DIM, HEADS, mha
from spec import SEQ, ModelSpec, block, xy_spec



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
]
