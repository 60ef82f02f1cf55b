"""LLaMA and Mistral decoders with the masks of transformers 4.53+ masking_utils (hf_masking.py), a
prefill and a decode graph each, in catalog_hf's shapes and inputs (batch row 1 left-padded)."""
import hf_masking
from catalog_hf import (DECODE_AXES, KV_IN, KV_OUT, LAYERS, LLAMA_FF, LLAMA_HEAD_DIM, LLAMA_KV_HEADS, NEW,
                        PAD, PAST, PREFILL_AXES, PROMPT, VOCAB, D_MODEL, HEADS, decode_inputs, prefill_inputs)
from spec import ModelSpec, block

WINDOW = 4  # shorter than the prompt (11) and than past + new (8)
SHAPE = (f"LLaMA as Hugging Face writes it from 4.53 on (modeling_llama, eager): vocab {VOCAB}, d_model "
         f"{D_MODEL}, {HEADS} query heads and {LLAMA_KV_HEADS} K/V heads of {LLAMA_HEAD_DIM}, {LAYERS} layers; the "
         "mask by masking_utils.create_causal_mask (index predicates on broadcast aranges, kv_idx <= q_idx AND "
         "padding_mask[batch_idx, kv_idx] from and_masks' new_ones start, expanded, then where(mask, 0, finfo.min)), "
         "scores * head_dim ** -0.5 plus the mask sliced to the key length")
MISTRAL = SHAPE.replace("LLaMA as", "Mistral as").replace("modeling_llama", "modeling_mistral").replace(
    "create_causal_mask (", f"create_sliding_window_causal_mask with sliding_window {WINDOW} (kv_idx > q_idx - "
    f"{WINDOW} ANDed in, ")


def build(window):
    return lambda: hf_masking.MaskingUtilsForCausalLM(VOCAB, D_MODEL, HEADS, LLAMA_KV_HEADS, LAYERS, LLAMA_FF,
                                                     sliding_window=window)


def blocks(kind, window=None):
    return [block(kind, HEADS, LLAMA_HEAD_DIM, LLAMA_KV_HEADS, window=window) for _ in range(LAYERS)]


def prefill(name, shape, window, kind, seed):
    return ModelSpec(name=name, description=f"{shape}. Prefill: input_ids and attention_mask (B, T) in, logits and "
                     f"present.N.key/value out. Sample: T {PROMPT}, batch row 1 left-padded by {PAD}.",
                     build=build(window), make_inputs=prefill_inputs, input_names=["input_ids", "attention_mask"],
                     output_names=["logits"] + KV_OUT, dynamic_axes=PREFILL_AXES,
                     attention_blocks=blocks(kind, window), expected_fusions=LAYERS, seed=seed)


def decode(name, shape, window, kind, seed):
    return ModelSpec(name=name, description=f"{shape}. Decode: input_ids (B, T), attention_mask (B, past+T) and "
                     "past_key_values.N.key/value in, logits and present.N.key/value out. Sample: past "
                     f"{PAST} (the presents of a real prefix), T {NEW}, batch row 1 left-padded by {PAD}.",
                     build=build(window), make_inputs=decode_inputs,
                     input_names=["input_ids", "attention_mask"] + KV_IN, output_names=["logits"] + KV_OUT,
                     dynamic_axes=DECODE_AXES, attention_blocks=blocks(kind, window), expected_fusions=LAYERS,
                     seed=seed, extra={"past_length": PAST})


SPECS = [
    prefill("hf_llama_masking_prefill", SHAPE, None, "causal+padding", 81),
    decode("hf_llama_masking_decode", SHAPE, None, "causal+padding", 82),
    prefill("hf_mistral_masking_prefill", MISTRAL, WINDOW, "window+padding", 83),
    decode("hf_mistral_masking_decode", MISTRAL, WINDOW, "window+padding", 84),
]
