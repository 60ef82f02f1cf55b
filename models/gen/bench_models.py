#!/usr/bin/python3
"""Write the (uncommitted) benchmark models and their inputs into DIR.

usage: /usr/bin/python3 models/gen/bench_models.py --out DIR [--only NAME ...] [--verify]

  mha_causal_768.onnx            multi-head causal attention, d_model 768, 12 heads, context
                                 4096, one layer, dynamic batch/seq, opset 17 (torch export)
  mha_causal_768_ort_fused.onnx  the same weights, attention as one ONNX `Attention` op
                                 (opset 23, ir_version 10, is_causal=1)
  gpt2_small.onnx                GPT of GPT-2-small shape (12 layers, 768, 12 heads, vocab
                                 50257, context 1024), random weights, opset 17
  hf_gpt2_prefill.onnx           GPT-2-small in Hugging Face's form (hf_gpt2.py: Conv1D addmm, gelu_new,
                                 tied wte/lm_head as MatMul(h, Transpose(wte)), causal where + padding
                                 attention_mask), 12 layers, 768, 12 heads, vocab 50257, context 1024
  hf_gpt2_decode.onnx            the same weights with past_key_values.N.key/value in, present out
  hf_gpt2_pos_decode.onnx        (--only hf_gpt2_pos) the same GPT-2-small with a position_ids input too,
                                 as Hugging Face's exporters write it: a decode graph whose rows of
                                 different lengths share one run (attune serve's continuous batching)
  inputs_hf_gpt2_prefill_T<T>/   batch 1, T in 128 512, attention_mask all ones
  inputs_hf_gpt2_decode_P<P>/    one new token after a real prefill of P tokens, P in 127 511
  hf_llama_prefill.onnx          LLaMA in Hugging Face's form (hf_llama.py: RMSNorm, rotary embeddings,
                                 repeat_kv, SwiGLU, untied lm_head, the _update_causal_mask 4-D mask with
                                 the attention_mask padding by ScatterND) at TinyLlama's width: d_model
                                 2048, 32 heads, 4 K/V heads of 64, MLP 5632, vocab 32000, 4 layers
  hf_llama_decode.onnx           the same weights with past_key_values.N.key/value (B, 4, past, 64) in
  inputs_hf_llama_*/, expected_hf_llama_*/  as for hf_gpt2
  inputs_<model>_T<T>/<name>.npy batch 1, T in 128 512 1024 2048 4096 (gpt2_small <= 1024)
  expected_<model>_T128/<name>.npy  PyTorch outputs at T = 128
--verify runs ort-run: ORT(mha_causal_768) vs PyTorch, and ORT(ort_fused) vs ORT(unfused),
both at T = 128, max abs error <= 1e-4.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ort_fused  # noqa: E402
from attention import MultiHeadAttention  # noqa: E402
from export import save_npys, torch_export, torch_outputs  # noqa: E402
from catalog_hf import past_names, present_names, tie_lm_head  # noqa: E402
from gpt import GPT  # noqa: E402
from hf_gpt2 import GPT2LMHeadModel, GPT2WithPositionIds  # noqa: E402
from hf_llama import LlamaForCausalLM  # noqa: E402
from spec import SEQ  # noqa: E402

LENGTHS = (128, 512, 1024, 2048, 4096)
ORT_RUN = "/work/shared/tools/ort/ort-run"


def gpt2_init(module):
    """GPT-2 style random weights: N(0, 0.02) matrices and embeddings, zero biases."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                m.weight.normal_(0.0, 0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                m.bias.zero_()
    return module


def float_inputs(d_model):
    return lambda rng, t: {"x": rng.standard_normal((1, t, d_model)).astype(np.float32)}


def ids_inputs(vocab):
    return lambda rng, t: {"input_ids": rng.randint(0, vocab, size=(1, t)).astype(np.int64)}


def build_mha():
    torch.manual_seed(768)
    return MultiHeadAttention(768, 768, 4096, 12).eval()


def build_gpt():
    torch.manual_seed(124)
    return gpt2_init(GPT(50257, 768, 12, 12, 1024)).eval()


def write_hf_gpt2(out):
    """Prefill and decode graphs of one GPT-2-small in Hugging Face's form."""
    torch.manual_seed(125)
    module = GPT2LMHeadModel(50257, 768, 12, 12, 1024).eval()
    write_hf_decoder(out, "hf_gpt2", module, 50257, 12, tie_lm_head)


def write_hf_gpt2_pos_decode(out):
    """The decode graph of GPT-2-small with position_ids (hf_gpt2.GPT2WithPositionIds): serve benchmark."""
    torch.manual_seed(125)
    module = GPT2WithPositionIds(50257, 768, 12, 12, 1024).eval()
    kv_in, kv_out = past_names(12), present_names(12)
    past = 7
    rng = np.random.RandomState(7)
    sample = {"input_ids": rng.randint(0, 50257, size=(1, 1)).astype(np.int64),
              "attention_mask": np.ones((1, past + 1), dtype=np.int64),
              "position_ids": np.full((1, 1), past, dtype=np.int64)}
    sample.update({n: np.zeros((1, 12, past, 64), dtype=np.float32) for n in kv_in})
    names = ["input_ids", "attention_mask", "position_ids"] + kv_in
    axes = {"input_ids": SEQ, "position_ids": SEQ, "logits": SEQ, "attention_mask": {0: "batch", 1: "total_seq"}}
    axes.update({n: {0: "batch", 2: "past_seq"} for n in kv_in})
    axes.update({n: {0: "batch", 2: "total_seq"} for n in kv_out})
    model = torch_export(module, sample, names, ["logits"] + kv_out, axes, 17)
    tie_lm_head(model, os.path.join(out, "hf_gpt2_pos_decode.onnx"))
    print("wrote hf_gpt2_pos_decode.onnx", flush=True)


def write_hf_llama(out):
    """Prefill and decode graphs of a 4-layer LLaMA of TinyLlama's width in Hugging Face's form:
    d_model 2048, 32 query heads and 4 K/V heads of 64, SwiGLU 5632, vocab 32000, rope theta 10000,
    RMSNorm eps 1e-5, untied lm_head; weights N(0, 0.02), norms ones (as Hugging Face initialises)."""
    torch.manual_seed(126)
    module = gpt2_init(LlamaForCausalLM(32000, 2048, 32, 4, 4, 5632, theta=10000.0, eps=1e-5)).eval()
    write_hf_decoder(out, "hf_llama", module, 32000, 4, checked_save)


def checked_save(model, path):
    onnx.checker.check_model(model, full_check=True)
    onnx.save_model(model, path)


def write_hf_decoder(out, name, module, vocab, layers, save):
    """<name>_prefill.onnx (input_ids, attention_mask in; logits, present.N.key/value out) and
    <name>_decode.onnx (past_key_values.N.key/value in too) of one module, saved by save(model, path);
    inputs at T 128 and 512 and after prefixes of 127 and 511 tokens, PyTorch logits at T 128 and
    past 127."""
    KV_IN, KV_OUT = past_names(layers), present_names(layers)
    prefill = lambda rng, t: {"input_ids": rng.randint(0, vocab, size=(1, t)).astype(np.int64),
                              "attention_mask": np.ones((1, t), dtype=np.int64)}
    feeds = prefill(np.random.RandomState(128), 128)
    axes = {"input_ids": SEQ, "attention_mask": SEQ, "logits": SEQ}
    axes.update({n: {0: "batch", 2: "seq"} for n in KV_OUT})
    model = torch_export(module, feeds, ["input_ids", "attention_mask"], ["logits"] + KV_OUT, axes, 17)
    save(model, os.path.join(out, f"{name}_prefill.onnx"))
    del model
    write_inputs(out, f"{name}_prefill", prefill, (128, 512))
    save_npys(os.path.join(out, f"expected_{name}_prefill_T128"),
              torch_outputs(module, feeds, ["input_ids", "attention_mask"], ["logits"]))
    print(f"wrote {name}_prefill.onnx", flush=True)

    def decode(rng, past):
        prefix = prefill(rng, past)
        with torch.no_grad():
            presents = module(torch.from_numpy(prefix["input_ids"]), torch.from_numpy(prefix["attention_mask"]))[1:]
        step = {"input_ids": rng.randint(0, vocab, size=(1, 1)).astype(np.int64),
                "attention_mask": np.ones((1, past + 1), dtype=np.int64)}
        step.update({n: t.numpy().copy() for n, t in zip(KV_IN, presents)})
        return step

    names = ["input_ids", "attention_mask"] + KV_IN
    axes = {"input_ids": SEQ, "logits": SEQ, "attention_mask": {0: "batch", 1: "total_seq"}}
    axes.update({n: {0: "batch", 2: "past_seq"} for n in KV_IN})
    axes.update({n: {0: "batch", 2: "total_seq"} for n in KV_OUT})
    sample = decode(np.random.RandomState(7), 7)
    model = torch_export(module, sample, names, ["logits"] + KV_OUT, axes, 17)
    save(model, os.path.join(out, f"{name}_decode.onnx"))
    del model
    for past in (127, 511):
        step = decode(np.random.RandomState(past), past)
        save_npys(os.path.join(out, f"inputs_{name}_decode_P{past}"), step)
        if past == 127:
            save_npys(os.path.join(out, f"expected_{name}_decode_P127"),
                      torch_outputs(module, step, names, ["logits"]))
    print(f"wrote {name}_decode.onnx", flush=True)


def write_inputs(out, name, make, lengths):
    for t in lengths:
        save_npys(os.path.join(out, f"inputs_{name}_T{t}"), make(np.random.RandomState(t), t))


def write_torch_model(out, name, module, in_name, out_name, make, lengths):
    t0 = lengths[0]
    feeds = make(np.random.RandomState(t0), t0)
    model = torch_export(module, feeds, [in_name], [out_name],
                         {in_name: SEQ, out_name: SEQ}, 17)
    onnx.save_model(model, os.path.join(out, f"{name}.onnx"))
    write_inputs(out, name, make, lengths)
    save_npys(os.path.join(out, f"expected_{name}_T{t0}"),
              torch_outputs(module, feeds, [in_name], [out_name]))
    print(f"wrote {name}.onnx", flush=True)


def ort_run(model, inputs, expected, out):
    cmd = [ORT_RUN, model, "--inputs", inputs, "--out", out, "--expected", expected]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])["outputs"]["y"]["max_abs_err"]


def verify(out):
    inputs = os.path.join(out, "inputs_mha_causal_768_T128")
    unfused_out = os.path.join(out, "ort_mha_causal_768_T128")
    err_torch = ort_run(os.path.join(out, "mha_causal_768.onnx"), inputs,
                        os.path.join(out, "expected_mha_causal_768_T128"), unfused_out)
    err_fused = ort_run(os.path.join(out, "mha_causal_768_ort_fused.onnx"), inputs,
                        unfused_out, os.path.join(out, "ort_mha_causal_768_ort_fused_T128"))
    print(f"T=128: ORT(mha_causal_768) vs PyTorch max abs err {err_torch}; "
          f"ORT(ort_fused) vs ORT(mha_causal_768) max abs err {err_fused}")
    return err_torch <= 1e-4 and err_fused <= 1e-4


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="*", choices=["mha", "gpt2", "hf_gpt2", "hf_gpt2_pos", "hf_llama"],
                    default=["mha", "gpt2", "hf_gpt2", "hf_llama"])
    ap.add_argument("--verify", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    if "mha" in args.only:
        mha = build_mha()
        write_torch_model(args.out, "mha_causal_768", mha, "x", "y", float_inputs(768), LENGTHS)
        ort_fused.save(ort_fused.build_attention_model(mha),
                       os.path.join(args.out, "mha_causal_768_ort_fused.onnx"))
        write_inputs(args.out, "mha_causal_768_ort_fused", float_inputs(768), LENGTHS)
        print("wrote mha_causal_768_ort_fused.onnx", flush=True)
    if "gpt2" in args.only:
        write_torch_model(args.out, "gpt2_small", build_gpt(), "input_ids", "logits",
                          ids_inputs(50257), [t for t in LENGTHS if t <= 1024])
    if "hf_gpt2" in args.only:
        write_hf_gpt2(args.out)
    if "hf_gpt2_pos" in args.only:
        write_hf_gpt2_pos_decode(args.out)
    if "hf_llama" in args.only:
        write_hf_llama(args.out)
    if args.verify and "mha" in args.only and not verify(args.out):
        sys.exit("verification failed")


if __name__ == "__main__":
    main()
