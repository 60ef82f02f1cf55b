"""Mixed-precision attention (forms_precision.py): float16 and bfloat16 models with the Cast pairs
libraries write around the softmax, a float16 KV cache next to float32 queries, and GPT-2 in
float16 throughout. Each form at opsets 14 and 17 (the bfloat16 LLaMA at 17 only: masked_fill is a Where,
which holds bfloat16 from opset 16), dynamic batch and seq, batch 2.

A float16 model is traced in a process of its own with stand-in float16 CPU kernels
(forms_precision.install_half_cpu_kernels; `catalog_precision.py NAME OUT.onnx`); its reference
outputs are PyTorch's in float16 (forms_precision.HalfReference). A bfloat16 model takes and gives
float32 (FloatIO) and its references are PyTorch's bfloat16 run with float32-accumulated GEMMs
(HalfReference). model.json's `precision` names the type the attention computes in;
tests/models/golden_test.cc sets its tolerances from it. The float16 padding forms (LLaMA, OPT,
GPT-2 with an attention_mask) fuse as causal + padding: the mask proof reads their mask steps at
every float16 score, and the fused op computes a row whose every key is hidden in float16 as the
subgraph rounds it (score_rounding).
"""
import io
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import onnx
import torch

import forms_precision as P
from export import strip_doc_strings, write_folder
from spec import ModelSpec, block

D_MODEL, HEADS = 64, 4
HEAD_DIM = D_MODEL // HEADS
PAD = 2          # batch row 1 is left-padded by this many positions
PAST, NEW = 5, 3


def padding_mask(total):
    mask = np.ones((2, total), dtype=np.int64)
    mask[1, :PAD] = 0
    return mask


def torch_args(inputs, names):
    """numpy inputs as torch tensors (float16 arrays as float16 tensors)."""
    return tuple(torch.from_numpy(inputs[n]) for n in names)


def export_traced(module, args, spec):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, buf, input_names=spec.input_names, output_names=spec.output_names,
                          dynamic_axes=spec.dynamic_axes, opset_version=spec.opset, do_constant_folding=True,
                          training=torch.onnx.TrainingMode.EVAL)
    return strip_doc_strings(onnx.load_from_string(buf.getvalue()))


def as_numpy(t):
    if t.dtype == torch.bfloat16:
        raise ValueError("a bfloat16 output: wrap the model in FloatIO")
    return t.detach().numpy()


def writer(precision):
    """spec.write for a model whose attention computes in `precision`."""
    def write(spec, folder):
        torch.manual_seed(spec.seed)
        module = spec.build().eval()
        inputs = spec.make_inputs(module, np.random.RandomState(1000 + spec.seed))
        if precision == "float16":
            module = module.half()
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "model.onnx")
                subprocess.run([sys.executable, os.path.abspath(__file__), spec.name, path], check=True)
                model = onnx.load(path)
            with torch.no_grad(), P.HalfReference():
                result = module(*torch_args(inputs, spec.input_names))
        else:
            if precision == "bfloat16":
                module = P.FloatIO(module.bfloat16(), torch.bfloat16)
            args = torch_args(inputs, spec.input_names)
            # Before the export: torch 1.13's export leaves a bfloat16 module computing other numbers.
            with torch.no_grad(), P.HalfReference():
                result = module(*args)
            model = export_traced(module, args, spec)
        result = result if isinstance(result, tuple) else (result,)
        outputs = {n: as_numpy(t) for n, t in zip(spec.output_names, result)}
        for n, a in outputs.items():
            if not np.isfinite(a.astype(np.float32)).all():
                raise ValueError(f"output {n} is not finite")
        meta = {"name": spec.name.split("/")[-1], "description": spec.description,
                "attention_blocks": spec.attention_blocks, "expected_fusions": spec.expected_fusions,
                "precision": precision, **spec.extra}
        write_folder(folder, model, inputs, outputs, meta, spec.save_model)
    return write


def x_mask_inputs(t, dtype):
    def make(module, rng):
        return {"x": rng.standard_normal((2, t, D_MODEL)).astype(dtype), "attention_mask": padding_mask(t)}
    return make


def x_inputs(t, dtype):
    def make(module, rng):
        return {"x": rng.standard_normal((2, t, D_MODEL)).astype(dtype)}
    return make


def cache_inputs(module, rng):
    shape = (2, HEADS, PAST, HEAD_DIM)
    return {"x": rng.standard_normal((2, NEW, D_MODEL)).astype(np.float32),
            "past_key": rng.standard_normal(shape).astype(np.float16),
            "past_value": rng.standard_normal(shape).astype(np.float16)}


XM_AXES = {"x": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
X_AXES = {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
CACHE_AXES = {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"},
              "past_key": {0: "batch", 2: "past_seq"}, "past_value": {0: "batch", 2: "past_seq"},
              "present_key": {0: "batch", 2: "total_seq"}, "present_value": {0: "batch", 2: "total_seq"}}

LLAMA = ("Hugging Face LLaMA/Mistral eager attention (modeling_llama 4.38-4.47), d_model 64, 4 heads of "
         "16: scores matmul(q, kT) / sqrt(16) in {t}, + the 4-D _update_causal_mask mask "
         "(triu(finfo({t}).min), padding by ScatterND), softmax(w, dim=-1, dtype=torch.float32)"
         ".to(query_states.dtype). Sample: T {n}, batch row 1 left-padded by 2.")
OPT = ("OPT's eager attention on 4-D heads, float16: q_proj(x) * 16**-0.5, scores q @ kT, + "
       "_make_causal_mask + _expand_mask (finfo(float16).min), torch.max(w, finfo.min), and the fp16 "
       "branch softmax(w, dim=-1, dtype=torch.float32).to(torch.float16). Sample: T {n}, batch row 1 "
       "left-padded by 2.")
T5 = ("T5 encoder self-attention without the position bias, {t}: no scale, no mask, "
      "softmax(scores.float(), dim=-1).type_as(scores). Sample: T {n}.")
CACHE = ("A float32 GPT-style causal block (where(bias[:, :, k-q:k, :k], w, finfo.min)) with a float16 KV "
         "cache: k = cat(past_key.float(), k), v likewise, presents stored back with .half(). Sample: "
         f"past {PAST}, T {NEW}.")
GPT2 = ("Hugging Face GPT-2 attention in float16 throughout: scores / full([], 4.0), "
        "where(bias[:, :, k-q:k, :k], w, finfo(float16).min) + (1 - attention_mask) * finfo(float16).min, a "
        "float16 softmax, no Cast. Sample: T {n}, batch row 1 left-padded by 2.")

LLAMA_BF16 = ("Hugging Face LLaMA eager attention (modeling_llama 4.38-4.47) in bfloat16, d_model 64, 4 heads "
              "of 16: scores matmul(q, kT) / sqrt(16) in bfloat16, + the 4-D _update_causal_mask mask as an "
              "export below opset 20 writes it (torch.full in float32 cast to bfloat16, triu, padding by "
              "ScatterND with the attention_mask cast to bfloat16), softmax(w, dim=-1, dtype=torch.float32)"
              ".to(bfloat16); float32 in and out (x.to(bfloat16), y.float()). Sample: T {n}, batch row 1 "
              "left-padded by 2. Fused as causal + padding: the mask proof reads the mask steps at every "
              "bfloat16 score (s + finfo(bfloat16).min rounds to the fill below 2^119), and rows whose every "
              "key is hidden are computed in bfloat16 as the subgraph rounds them (score_rounding).")
LLAMA_CAUSAL = ("Hugging Face LLaMA eager attention (modeling_llama 4.42) in float16 called without an "
                "attention_mask: the mask is torch.full((T, T + 1), finfo(float16).min).triu(1) times "
                "arange(T + 1) > cache_position, sliced to the T keys and added to the float16 scores "
                "matmul(q, kT) / sqrt(16); softmax(w, dim=-1, dtype=torch.float32).to(float16). Sample: T {n}. "
                "Fused as causal: the mask proof reads the added mask at every float16 score, and a row "
                "whose visible scores all overflow to -inf is computed as the subgraph rounds it.")

GPT2_CAUSAL = ("Hugging Face GPT-2 attention in float16 called without an attention_mask: scores / "
               "full([], 4.0), where(bias[:, :, k-q:k, :k], w, finfo(float16).min), a float16 softmax. "
               "Sample: T {n}.")


# The padding forms in float16: the subgraph adds finfo(float16).min to the scores in float16, where
# s + min rounds in steps of 32, so a row whose every key is hidden (the first rows of a left-padded
# sequence) weights its keys by how their scores round; the fused op computes such rows in float16
# as the subgraph does (README, "Mixed precision").
HALF_ROWS = (" Fused as causal + padding: rows whose every key is hidden are computed in float16 as the "
             "subgraph rounds them (score_rounding).")


def spec(name, description, build, make_inputs, input_names, output_names, axes, mask, precision, opset, seed,
         kv_heads=None):
    attention = block(mask, HEADS, HEAD_DIM, kv_heads)
    if build is P.T5Attention:
        attention["scale"] = 1.0   # T5 does not scale its scores
    if build is P.OPTAttention:
        # q_proj(x) * 16**-0.5 stays in the graph: the fused op reads Q as the score MatMul does,
        # which its float16 rows need.
        attention["scale"] = 1.0
    if precision == "float16" and "padding" in mask:
        description += HALF_ROWS
    return ModelSpec(name=name, description=description, build=build, make_inputs=make_inputs,
                     input_names=input_names, output_names=output_names, dynamic_axes=axes,
                     attention_blocks=[attention], expected_fusions=1,
                     opset=opset, seed=seed, write=writer(precision))


def forms(opset, seed, suffix):
    n = 10 + opset % 3   # 12 at opset 14, 11 at 17
    return [
        spec(f"precision_llama_fp16{suffix}", LLAMA.format(t="float16", n=n), P.LlamaAttention,
             x_mask_inputs(n, np.float16), ["x", "attention_mask"], ["y"], XM_AXES, "causal+padding",
             "float16", opset, seed),
        spec(f"precision_opt_fp16{suffix}", OPT.format(n=n), P.OPTAttention, x_mask_inputs(n, np.float16),
             ["x", "attention_mask"], ["y"], XM_AXES, "causal+padding", "float16", opset, seed + 1),
        spec(f"precision_t5_fp16{suffix}", T5.format(t="float16", n=n), P.T5Attention, x_inputs(n, np.float16),
             ["x"], ["y"], X_AXES, "none", "float16", opset, seed + 2),
        spec(f"precision_fp16_cache{suffix}", CACHE, P.Fp16CacheAttention, cache_inputs,
             ["x", "past_key", "past_value"], ["y", "present_key", "present_value"], CACHE_AXES, "causal",
             "float32", opset, seed + 3),
        spec(f"precision_gpt2_fp16{suffix}", GPT2.format(n=n), P.GPT2Attention, x_mask_inputs(n, np.float16),
             ["x", "attention_mask"], ["y"], XM_AXES, "causal+padding", "float16", opset, seed + 4),
        spec(f"precision_gpt2_causal_fp16{suffix}", GPT2_CAUSAL.format(n=n), P.GPT2Attention,
             x_inputs(n, np.float16), ["x"], ["y"], X_AXES, "causal", "float16", opset, seed + 5),
        spec(f"precision_llama_causal_fp16{suffix}", LLAMA_CAUSAL.format(n=n), P.Llama16BitAttention,
             x_inputs(n, np.float16), ["x"], ["y"], X_AXES, "causal", "float16", opset, seed + 6),
    ] + ([] if opset < 16 else [  # Where holds bfloat16 from opset 16
        spec(f"precision_llama_bf16{suffix}", LLAMA_BF16.format(n=n), P.Llama16BitAttention,
             x_mask_inputs(n, np.float32), ["x", "attention_mask"], ["y"], XM_AXES, "causal+padding",
             "bfloat16", opset, seed + 7),
    ])


SPECS = forms(17, 61, "") + forms(14, 71, "_op14") + [
    spec("precision_t5_bf16", T5.format(t="bfloat16", n=11) + " float32 in and out (x.to(bfloat16), "
         "y.float()).", P.T5Attention, x_inputs(11, np.float32), ["x"], ["y"], X_AXES, "none", "bfloat16", 17, 82),
    spec("precision_t5_bf16_op14", T5.format(t="bfloat16", n=12) + " float32 in and out (x.to(bfloat16), "
         "y.float()).", P.T5Attention, x_inputs(12, np.float32), ["x"], ["y"], X_AXES, "none", "bfloat16", 14, 83),
]


def trace_fp16(name, path):
    """Exports the float16 model `name` to `path` (run in a process of its own, see the module doc)."""
    lib = P.install_half_cpu_kernels()  # noqa: F841 (kept alive while tracing)
    torch.set_num_threads(1)
    spec = next(s for s in SPECS if s.name == name)
    torch.manual_seed(spec.seed)
    module = spec.build().eval().half()
    inputs = spec.make_inputs(module, np.random.RandomState(1000 + spec.seed))
    onnx.save_model(export_traced(module, torch_args(inputs, spec.input_names), spec), path)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace_fp16(sys.argv[1], sys.argv[2])
