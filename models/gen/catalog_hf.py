"""Models in Hugging Face's form, each with an attention_mask input and one batch row left-padded:
GPT-2 (hf_gpt2.py), a prefill graph and a decode graph with past_key_values; one LLaMA attention
block with the 4-D mask of _update_causal_mask, and the whole LLaMA decoder (RMSNorm, rotary
embeddings, grouped K/V heads, SwiGLU) as a prefill and a decode graph (hf_llama.py)."""
import dataclasses

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper

import hf_gpt2
import hf_gpt_bigcode
import hf_llama
import hf_qwen3
from spec import SEQ, ModelSpec, block

VOCAB, D_MODEL, HEADS, LAYERS, CTX = 97, 64, 4, 2, 64
HEAD_DIM = D_MODEL // HEADS
SHAPE = (f"GPT-2 as Hugging Face writes it: vocab {VOCAB}, d_model {D_MODEL}, {HEADS} heads of "
         f"{HEAD_DIM}, {LAYERS} layers, context {CTX}; Conv1D addmm projections, gelu_new (tanh, "
         "Pow 3), tied wte/lm_head, causal torch.where(bias[:, :, k-q:k, :k], w, finfo.min) plus "
         "(1 - attention_mask) * finfo.min")
PAD = 2              # batch row 1 is left-padded by this many positions
PAST, NEW, PROMPT = 5, 3, 11


def past_names(layers):
    return [f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]


def present_names(layers):
    return [f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]


KV_IN, KV_OUT = past_names(LAYERS), present_names(LAYERS)


def tie_lm_head(model, path):
    """Writes the lm_head as MatMul(h, Transpose(wte)) on the one embedding matrix, as exports of
    tied checkpoints carry it, where torch 1.13's constant folding stored a transposed copy."""
    arrays = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    matrices = {n: a for n, a in arrays.items() if a.ndim == 2}
    matmul_weights = {n.input[1] for n in model.graph.node if n.op_type == "MatMul"}
    for name, arr in matrices.items():
        if name not in matmul_weights:
            continue
        source = next((n for n, w in matrices.items()
                       if n != name and w.shape == arr.T.shape and np.array_equal(w.T, arr)), None)
        if source is None:
            continue
        kept = [i for i in model.graph.initializer if i.name != name]
        del model.graph.initializer[:]
        model.graph.initializer.extend(kept)
        model.graph.node.insert(0, helper.make_node("Transpose", [source], [name], perm=[1, 0],
                                                    name="/lm_head/Transpose"))
        break
    onnx.checker.check_model(model, full_check=True)
    onnx.save_model(model, path)


def build():
    return hf_gpt2.GPT2LMHeadModel(VOCAB, D_MODEL, HEADS, LAYERS, CTX)


def build_with_positions():
    return hf_gpt2.GPT2WithPositionIds(VOCAB, D_MODEL, HEADS, LAYERS, CTX)


def positions(mask):
    """Hugging Face's position ids for a left-padded batch: cumsum(mask) - 1, 0 on padding."""
    return np.maximum(np.cumsum(mask, axis=1) - 1, 0).astype(np.int64)


def padding_mask(total):
    mask = np.ones((2, total), dtype=np.int64)
    mask[1, :PAD] = 0
    return mask


def prefill_inputs(module, rng):
    return {"input_ids": rng.randint(0, VOCAB, size=(2, PROMPT)).astype(np.int64),
            "attention_mask": padding_mask(PROMPT)}


def decode_inputs(module, rng, kv_names=None):
    """past_* are the presents of a real PAST-token prefix (row 1 padded), then NEW tokens; `kv_names`
    the cache inputs in the order of the module's presents (default KV_IN)."""
    prefix = rng.randint(0, VOCAB, size=(2, PAST)).astype(np.int64)
    with torch.no_grad():
        out = module(torch.from_numpy(prefix), torch.from_numpy(padding_mask(PAST)))
    feeds = {"input_ids": rng.randint(0, VOCAB, size=(2, NEW)).astype(np.int64),
             "attention_mask": padding_mask(PAST + NEW)}
    for name, t in zip(kv_names or KV_IN, out[1:]):
        feeds[name] = t.numpy().copy()
    return feeds


LLAMA_T = 10


def llama_inputs(module, rng):
    return {"x": rng.standard_normal((2, LLAMA_T, D_MODEL)).astype(np.float32),
            "attention_mask": padding_mask(LLAMA_T)}


def pos_prefill_inputs(module, rng):
    feeds = prefill_inputs(module, rng)
    feeds["position_ids"] = positions(feeds["attention_mask"])
    return feeds


def pos_decode_inputs(module, rng):
    """As decode_inputs, with position ids continuing each row's count of real tokens."""
    prefix = rng.randint(0, VOCAB, size=(2, PAST)).astype(np.int64)
    mask = padding_mask(PAST)
    with torch.no_grad():
        out = module(torch.from_numpy(prefix), torch.from_numpy(mask), torch.from_numpy(positions(mask)))
    full = padding_mask(PAST + NEW)
    feeds = {"input_ids": rng.randint(0, VOCAB, size=(2, NEW)).astype(np.int64),
             "attention_mask": full, "position_ids": positions(full)[:, PAST:]}
    for name, t in zip(KV_IN, out[1:]):
        feeds[name] = t.numpy().copy()
    return feeds


LLAMA_KV_HEADS, LLAMA_FF = 2, 176
LLAMA_HEAD_DIM = D_MODEL // HEADS
LLAMA_SHAPE = (f"LLaMA as Hugging Face writes it (modeling_llama, eager, legacy tuple cache): vocab {VOCAB}, "
               f"d_model {D_MODEL}, {HEADS} query heads and {LLAMA_KV_HEADS} K/V heads of {LLAMA_HEAD_DIM}, "
               f"{LAYERS} layers, SwiGLU MLP {LLAMA_FF}, untied lm_head; RMSNorm, rotary embeddings "
               "(inv_freq @ position_ids, cat(freqs, freqs), rotate_half by slices), repeat_kv by expand + "
               "reshape, scores / sqrt(head_dim) + the _update_causal_mask 4-D mask (triu(finfo.min) times "
               "arange > cache_position, padding by ScatterND) sliced to the key length, float32 softmax")


def build_qwen3():
    return hf_qwen3.Qwen3ForCausalLM(VOCAB, D_MODEL, HEADS, LLAMA_KV_HEADS, LAYERS, LLAMA_FF)


QWEN3_SHAPE = LLAMA_SHAPE.replace("LLaMA as Hugging Face writes it (modeling_llama", "Qwen3 as Hugging Face writes it "
                                  "(modeling_qwen3") + "; q_norm and k_norm (RMSNorm over the head dim) before RoPE"


def build_llama():
    return hf_llama.LlamaForCausalLM(VOCAB, D_MODEL, HEADS, LLAMA_KV_HEADS, LAYERS, LLAMA_FF)


AXES = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
PREFILL_AXES = dict(AXES, attention_mask={0: "batch", 1: "seq"})
PREFILL_AXES.update({n: {0: "batch", 2: "seq"} for n in KV_OUT})
DECODE_AXES = dict(AXES, attention_mask={0: "batch", 1: "total_seq"})
DECODE_AXES.update({n: {0: "batch", 2: "past_seq"} for n in KV_IN})
DECODE_AXES.update({n: {0: "batch", 2: "total_seq"} for n in KV_OUT})
POS_PREFILL_AXES = dict(PREFILL_AXES, position_ids={0: "batch", 1: "seq"})
POS_DECODE_AXES = dict(DECODE_AXES, position_ids={0: "batch", 1: "seq"})
BLOCKS = [block("causal+padding", HEADS, HEAD_DIM) for _ in range(LAYERS)]
LLAMA_BLOCKS = [block("causal+padding", HEADS, LLAMA_HEAD_DIM, LLAMA_KV_HEADS) for _ in range(LAYERS)]
# With a cache, _update_causal_mask sizes its causal part by attention_mask.shape[-1] (total_seq, a
# symbol of its own beside the cache's past_seq + seq): an attention_mask of one key gives a (T, 1)
# mask that the scores broadcast to every key, causal part included. That is neither causal + padding
# nor a refusal, so these blocks fuse with the mask as an explicit input.
LLAMA_DECODE_NOTE = (" _update_causal_mask takes its key count from attention_mask (total_seq), so an attention_mask "
                     "of one key broadcasts the whole mask's first column, causal part included, to every key: "
                     "the blocks fuse as causal + padding under the decoder convention total_seq = past_seq + seq, "
                     "which every run checks; a run that breaks it runs the graph optimised without it, where "
                     "they fuse with the mask as an explicit input.")

SPECS = [
    ModelSpec(name="hf_gpt2_prefill",
              description=f"{SHAPE}. Prefill: input_ids and attention_mask (B, T) in, logits and "
              f"present.N.key/value out. Sample: T {PROMPT}, batch row 1 left-padded by {PAD}.",
              build=build, make_inputs=prefill_inputs, input_names=["input_ids", "attention_mask"],
              output_names=["logits"] + KV_OUT, dynamic_axes=PREFILL_AXES, attention_blocks=BLOCKS,
              expected_fusions=2, seed=41, save_model=tie_lm_head),
    ModelSpec(name="hf_gpt2_decode",
              description=f"{SHAPE}. Decode: input_ids (B, T), attention_mask (B, past+T) and "
              "past_key_values.N.key/value (B, H, past, D) in, logits and present.N.key/value "
              f"(B, H, past+T, D) out. Sample: past {PAST} (the presents of a real prefix), T {NEW}, "
              f"batch row 1 left-padded by {PAD}.",
              build=build, make_inputs=decode_inputs, input_names=["input_ids", "attention_mask"] + KV_IN,
              output_names=["logits"] + KV_OUT, dynamic_axes=DECODE_AXES, attention_blocks=BLOCKS,
              expected_fusions=2, seed=42,
              extra={"past_length": PAST}, save_model=tie_lm_head),
    ModelSpec(name="hf_llama_mask",
              description=f"One LLaMA attention block as Hugging Face writes it (d_model {D_MODEL}, "
              f"{HEADS} heads of {HEAD_DIM}; bias-free q/k/v/o Linear, view + transpose(1, 2), "
              "scores / sqrt(head_dim) + mask, float32 softmax), with the mask of _update_causal_mask: "
              "full((T, T), finfo.min).triu(1) times arange(T) > cache_position, expanded to (B, 1, T, T), "
              "cloned, and causal_mask[:, :, :, :n] = causal_mask[:, :, :, :n].masked_fill(padding, "
              "finfo.min), exported as ScatterND. x (B, T, d_model) and attention_mask (B, T) in, y out. "
              f"Sample: T {LLAMA_T}, batch row 1 left-padded by {PAD}.",
              build=lambda: hf_llama.LlamaMaskedAttention(D_MODEL, HEADS), make_inputs=llama_inputs,
              input_names=["x", "attention_mask"], output_names=["y"],
              dynamic_axes={"x": SEQ, "attention_mask": SEQ, "y": SEQ},
              attention_blocks=[block("causal+padding", HEADS, HEAD_DIM)], expected_fusions=1, seed=43),

    ModelSpec(name="hf_llama_prefill",
              description=f"{LLAMA_SHAPE}. Prefill: input_ids and attention_mask (B, T) in, logits and "
              f"present.N.key/value (B, {LLAMA_KV_HEADS}, T, {LLAMA_HEAD_DIM}) out. Sample: T {PROMPT}, "
              f"batch row 1 left-padded by {PAD}.",
              build=build_llama, make_inputs=prefill_inputs, input_names=["input_ids", "attention_mask"],
              output_names=["logits"] + KV_OUT, dynamic_axes=PREFILL_AXES, attention_blocks=LLAMA_BLOCKS,
              expected_fusions=LAYERS, seed=45),
    ModelSpec(name="hf_llama_decode",
              description=f"{LLAMA_SHAPE}. Decode: input_ids (B, T), attention_mask (B, past+T) and "
              f"past_key_values.N.key/value (B, {LLAMA_KV_HEADS}, past, {LLAMA_HEAD_DIM}) in, logits and "
              f"present.N.key/value (B, {LLAMA_KV_HEADS}, past+T, {LLAMA_HEAD_DIM}) out. Sample: past "
              f"{PAST} (the presents of a real prefix), T {NEW}, batch row 1 left-padded by {PAD}.",
              build=build_llama, make_inputs=decode_inputs, input_names=["input_ids", "attention_mask"] + KV_IN,
              output_names=["logits"] + KV_OUT, dynamic_axes=DECODE_AXES, attention_blocks=LLAMA_BLOCKS,
              expected_fusions=LAYERS, seed=46, extra={"past_length": PAST}),

    # A matched pair (one seed, the same weights) with a position_ids input, for generation:
    # attune generate hf_gpt2_pos_prefill/model.onnx --decode-model hf_gpt2_pos_decode/model.onnx
    ModelSpec(name="hf_gpt2_pos_prefill",
              description=f"{SHAPE}. Prefill with position ids: input_ids, attention_mask and "
              "position_ids (B, T) in, logits and present.N.key/value out; the same weights as "
              f"hf_gpt2_pos_decode. Sample: T {PROMPT}, batch row 1 left-padded by {PAD}, positions "
              "cumsum(mask) - 1.",
              build=build_with_positions, make_inputs=pos_prefill_inputs,
              input_names=["input_ids", "attention_mask", "position_ids"],
              output_names=["logits"] + KV_OUT, dynamic_axes=POS_PREFILL_AXES, attention_blocks=BLOCKS,
              expected_fusions=2, seed=44, save_model=tie_lm_head),
    ModelSpec(name="hf_gpt2_pos_decode",
              description=f"{SHAPE}. Decode with position ids: input_ids and position_ids (B, T), "
              "attention_mask (B, past+T) and past_key_values.N.key/value (B, H, past, D) in, logits "
              "and present.N.key/value (B, H, past+T, D) out; the same weights as hf_gpt2_pos_prefill. "
              f"Sample: past {PAST}, T {NEW}, batch row 1 left-padded by {PAD}.",
              build=build_with_positions, make_inputs=pos_decode_inputs,
              input_names=["input_ids", "attention_mask", "position_ids"] + KV_IN,
              output_names=["logits"] + KV_OUT, dynamic_axes=POS_DECODE_AXES, attention_blocks=BLOCKS,
              expected_fusions=2, seed=44, extra={"past_length": PAST}, save_model=tie_lm_head),
    ModelSpec(name="hf_qwen3_prefill",
              description=f"{QWEN3_SHAPE}. Prefill: input_ids and attention_mask (B, T) in, logits and "
              f"present.N.key/value out. Sample: T {PROMPT}, batch row 1 left-padded by {PAD}.",
              build=build_qwen3, make_inputs=prefill_inputs, input_names=["input_ids", "attention_mask"],
              output_names=["logits"] + KV_OUT, dynamic_axes=PREFILL_AXES, attention_blocks=LLAMA_BLOCKS,
              expected_fusions=LAYERS, seed=47),
    ModelSpec(name="hf_qwen3_decode",
              description=f"{QWEN3_SHAPE}. Decode: input_ids (B, T), attention_mask (B, past+T) and "
              "past_key_values.N.key/value in, logits and present.N.key/value out. Sample: past "
              f"{PAST} (the presents of a real prefix), T {NEW}, batch row 1 left-padded by {PAD}.",
              build=build_qwen3, make_inputs=decode_inputs, input_names=["input_ids", "attention_mask"] + KV_IN,
              output_names=["logits"] + KV_OUT, dynamic_axes=DECODE_AXES, attention_blocks=LLAMA_BLOCKS,
              expected_fusions=LAYERS, seed=48, extra={"past_length": PAST}),
]


BIGCODE_SHAPE = (f"GPTBigCode (StarCoder, SantaCoder) as Hugging Face writes it (modeling_gpt_bigcode, eager, "
                 f"multi_query, the CPU path): vocab {VOCAB}, d_model {D_MODEL}, {HEADS} query heads and one K/V "
                 f"head of {HEAD_DIM}, {LAYERS} layers, context {CTX}; c_attn split into the query (B, T, "
                 f"{D_MODEL}) and key_value (B, T, {2 * HEAD_DIM}), the heads folded into the query axis "
                 "(query.reshape(B, T*H, D), baddbmm(zeros, query, key (B, D, S), beta=1, alpha=D ** -0.5) "
                 "viewed (B, T, H, S)), the mask bias[None, k-q:k, :k] * attention_mask.view(B, 1, -1).bool() "
                 "unsqueezed to (B, T, 1, S), torch.where(mask, w, finfo.min), softmax, bmm(w.view(B, T*H, S), "
                 "value).view(B, T, H*D); position ids from cumsum(attention_mask), tied lm_head, "
                 "gelu_pytorch_tanh")
BIGCODE_KV_IN = [f"past_key_values.{i}" for i in range(LAYERS)]
BIGCODE_KV_OUT = [f"present.{i}" for i in range(LAYERS)]
BIGCODE_PREFILL_AXES = dict(AXES, attention_mask={0: "batch", 1: "seq"})
BIGCODE_PREFILL_AXES.update({n: {0: "batch", 1: "seq"} for n in BIGCODE_KV_OUT})
BIGCODE_DECODE_AXES = dict(AXES, attention_mask={0: "batch", 1: "total_seq"})
BIGCODE_DECODE_AXES.update({n: {0: "batch", 1: "past_seq"} for n in BIGCODE_KV_IN})
BIGCODE_DECODE_AXES.update({n: {0: "batch", 1: "total_seq"} for n in BIGCODE_KV_OUT})
BIGCODE_BLOCKS = [block("causal+padding", HEADS, HEAD_DIM, 1) for _ in range(LAYERS)]


def build_bigcode():
    return hf_gpt_bigcode.GPTBigCodeForCausalLM(VOCAB, D_MODEL, HEADS, LAYERS, CTX)


def bigcode_decode_inputs(module, rng):
    """As decode_inputs, with one (B, past, 2D) cache tensor per layer."""
    return decode_inputs(module, rng, BIGCODE_KV_IN)


SPECS += [
    ModelSpec(name="hf_gpt_bigcode_prefill",
              description=f"{BIGCODE_SHAPE}. Prefill: input_ids and attention_mask (B, T) in, logits and "
              f"present.N (B, T, {2 * HEAD_DIM}) out. Sample: T {PROMPT}, batch row 1 left-padded by {PAD}.",
              build=build_bigcode, make_inputs=prefill_inputs, input_names=["input_ids", "attention_mask"],
              output_names=["logits"] + BIGCODE_KV_OUT, dynamic_axes=BIGCODE_PREFILL_AXES,
              attention_blocks=BIGCODE_BLOCKS, expected_fusions=LAYERS, seed=49, save_model=tie_lm_head),
    ModelSpec(name="hf_gpt_bigcode_decode",
              description=f"{BIGCODE_SHAPE}. Decode: input_ids (B, T), attention_mask (B, past+T) and "
              f"past_key_values.N (B, past, {2 * HEAD_DIM}) in, logits and present.N (B, past+T, "
              f"{2 * HEAD_DIM}) out. Sample: past {PAST} (the presents of a real prefix), T {NEW}, batch row 1 "
              f"left-padded by {PAD}. The position ids are cumsum(attention_mask) sliced [past : past + T]: "
              "their length is T only because attention_mask covers past + T keys, which the export names "
              "as its own symbol (total_seq). The blocks fuse as causal + padding under that decoder "
              "convention, which every run checks (a run that breaks it runs the graph optimised without it).",
              build=build_bigcode, make_inputs=bigcode_decode_inputs,
              input_names=["input_ids", "attention_mask"] + BIGCODE_KV_IN,
              output_names=["logits"] + BIGCODE_KV_OUT, dynamic_axes=BIGCODE_DECODE_AXES,
              attention_blocks=BIGCODE_BLOCKS, expected_fusions=LAYERS, seed=50,
              extra={"past_length": PAST}, save_model=tie_lm_head),
]


def variant(name, suffix, description, **changes):
    """A spec of SPECS exported another way (another opset, or static shapes): the same module, seed and inputs."""
    base = next(s for s in SPECS if s.name == name)
    return dataclasses.replace(base, name=f"{name}_{suffix}", description=f"{base.description} {description}",
                               **changes)


SPECS += [
    variant("hf_gpt2_decode", "op13", "Exported at opset 13.", opset=13),
    variant("hf_llama_prefill", "op14", "Exported at opset 14 (the lowest with Trilu, which torch.triu needs).",
            opset=14),
    variant("hf_llama_decode", "static", "Exported without dynamic axes: every shape is the sample's, so constant "
            "folding turns the causal part of the mask into a constant buffer holding finfo.min; with one key "
            "count, the blocks fuse as causal + padding.", dynamic_axes={}),
]
SPECS = [dataclasses.replace(s, description=s.description + LLAMA_DECODE_NOTE)
         if s.name in ("hf_llama_decode", "hf_qwen3_decode") else s for s in SPECS]
