#!/usr/bin/python3
"""Write the ONNX Runtime outputs of the models `attune inspect --save-optimized` saves.

usage: /usr/bin/python3 tests/models/ort_saved/make_fixtures.py [--attune build/tools/attune] [MODEL ...]

For each example model (default: the causal ones listed below), saves its
optimised graph with attune, checks that every fused attention was written as
the standard ONNX Attention op (or, with attention sinks or attention weights
ONNX Attention cannot give, as its standard subgraph), runs the saved file in ONNX Runtime
(/work/shared/tools/ort/ort-run, one thread) on models/<model>/inputs and
writes its outputs to tests/models/ort_saved/<model>/<output>.npy. The test
tests/models/saved_onnx_attention_test.cc reads them: it needs no ONNX Runtime.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
ORT_RUN = "/work/shared/tools/ort/ort-run"
# Causal blocks without a padding input, whose masks are written by Where,
# an added buffer, a runtime Trilu and a finite fill; one and two layers.
MODELS = ["mha_causal", "mha_causal_op13", "mha_causal_op14", "causal_single_head", "mha_neg1e4_fill",
          "mha_tril_runtime", "mha_additive_mask", "mha_gqa", "gpt_maskfill", "gpt_where_finfo", "nanogpt",
          "sdpa_is_causal",
          # Attention sinks: written as their standard subgraph (ONNX Attention has no sink).
          "gpt_oss_sinks", "gpt_oss_sinks_op13",
          # nn.MultiheadAttention with need_weights=True: ONNX Attention's probabilities output
          # (qk_matmul_output_mode 3), or with a key padding input the standard subgraph.
          "torch_mha_weights", "torch_mha_weights_per_head_op14", "torch_mha_weights_causal_op14",
          "torch_mha_weights_padding_op17", "torch_mha_weights_plain_op17", "torch_mha_weights_bool_per_head_op17"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--attune", default=os.path.join(ROOT, "build", "tools", "attune"))
    args = ap.parse_args()
    for name in args.models or MODELS:
        folder = os.path.join(ROOT, "models", name)
        with tempfile.TemporaryDirectory() as tmp:
            saved = os.path.join(tmp, "optimized.onnx")
            res = subprocess.run([args.attune, "inspect", os.path.join(folder, "model.onnx"), "--format", "json",
                                  "--save-optimized", saved], capture_output=True, text=True, check=True)
            summary = json.loads(res.stdout)["saved_model"]
            written = summary["attention_ops"] + summary.get("attention_subgraphs", 0)
            if summary["kept_as_multi_head_attention"] or written == 0:
                sys.exit(f"{name}: not every attention was written as standard ONNX: {summary}")
            out = os.path.join(HERE, name)
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            res = subprocess.run([ORT_RUN, saved, "--inputs", os.path.join(folder, "inputs"), "--out", out,
                                  "--expected", os.path.join(folder, "outputs"), "--threads", "1"],
                                 capture_output=True, text=True, check=True)
            report = json.loads(res.stdout.strip().splitlines()[-1])
            errors = {k: v.get("max_abs_err") for k, v in report["outputs"].items()}
            print(f"{name:24s} Attention x{summary['attention_ops']} subgraphs x{summary.get('attention_subgraphs', 0)}"
                  f"  ONNX Runtime vs PyTorch {errors}")


if __name__ == "__main__":
    main()
