"""The small GPTs: masked_fill, torch.where(finfo.min), and KV-cache variants."""
import numpy as np
import torch

import gpt
from spec import SEQ, ModelSpec, block

VOCAB, D_MODEL, HEADS, LAYERS, CTX = 97, 128, 4, 2, 64
HEAD_DIM = D_MODEL // HEADS
SHAPE = (f"GPT: vocab {VOCAB}, d_model {D_MODEL}, {HEADS} heads of {HEAD_DIM}, {LAYERS} "
         f"pre-LayerNorm layers, context {CTX}, token + position embeddings, fused QKV Linear "
         "(with bias) split into Q/K/V, GELU (erf) MLP, final LayerNorm, bias-free LM head")


def build(cls=gpt.GPT, mask_style="maskfill"):
    return lambda: cls(VOCAB, D_MODEL, HEADS, LAYERS, CTX, mask_style)


def ids_inputs(num_tokens):
    def make(module, rng):
        return {"input_ids": rng.randint(0, VOCAB, size=(2, num_tokens)).astype(np.int64)}
    return make


def blocks(mask="causal"):
    return [block(mask, HEADS, HEAD_DIM) for _ in range(LAYERS)]


def gpt_spec(name, description, mask_style, seed, num_tokens):
    return ModelSpec(name=name, description=f"{SHAPE}. {description}",
                     build=build(mask_style=mask_style), make_inputs=ids_inputs(num_tokens),
                     input_names=["input_ids"], output_names=["logits"],
                     dynamic_axes={"input_ids": SEQ, "logits": SEQ},
                     attention_blocks=blocks(), expected_fusions=LAYERS, seed=seed)


PAST, NEW = 5, 3
KV_IN = [f"past_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]
KV_OUT = [f"present_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]


def cache_inputs(module, rng):
    """past_* are the presents of a real 5-token prefix; then 3 new tokens."""
    prefix = torch.from_numpy(rng.randint(0, VOCAB, size=(2, PAST)).astype(np.int64))
    with torch.no_grad():
        _, presents = module.run(prefix, [None] * LAYERS)
    feeds = {"input_ids": rng.randint(0, VOCAB, size=(2, NEW)).astype(np.int64)}
    for i, (k, v) in enumerate(presents):
        feeds[f"past_key_{i}"] = k.numpy().copy()
        feeds[f"past_value_{i}"] = v.numpy().copy()
    return feeds


CACHE_AXES = {"input_ids": SEQ, "logits": SEQ}
CACHE_AXES.update({n: {0: "batch", 2: "past_seq"} for n in KV_IN})
CACHE_AXES.update({n: {0: "batch", 2: "total_seq"} for n in KV_OUT})

SPECS = [
    gpt_spec("gpt_maskfill", "Mask: bool triu(1) buffer sliced [:T,:T], "
             "masked_fill(-inf) on the scaled scores.", "maskfill", 31, 13),
    gpt_spec("gpt_where_finfo", "Mask: bool tril buffer (True = keep) sliced [:T,:T], "
             "torch.where(mask, scores, torch.finfo(float32).min).", "where_finfo", 32, 14),
    ModelSpec(name="gpt_kvcache",
              description=f"{SHAPE}. KV cache: past_key_i/past_value_i (B,H,past,D) are "
              "concatenated before the new K/V on axis 2 and returned as present_key_i/"
              "present_value_i (B,H,past+T,D). Causal mask bottom-right aligned: bool triu(1) "
              "buffer sliced [past:past+T, :past+T], masked_fill(-inf); positions "
              "arange(past, past+T). Dynamic batch, seq and past_seq. Sample: past 5 (the "
              "presents of a real 5-token prefix), T 3.",
              build=build(gpt.GPTWithCache), make_inputs=cache_inputs,
              input_names=["input_ids"] + KV_IN, output_names=["logits"] + KV_OUT,
              dynamic_axes=CACHE_AXES, attention_blocks=blocks(), expected_fusions=LAYERS,
              seed=33, extra={"past_length": PAST}),
]
