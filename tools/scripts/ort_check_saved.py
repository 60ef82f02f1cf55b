#!/usr/bin/python3
"""Check that ONNX Runtime runs the models `attune inspect --save-optimized` writes.

usage: /usr/bin/python3 tools/scripts/ort_check_saved.py [--attune build/tools/attune]
           [--ort-run PATH] [--tol 1e-4] [--opt all|disabled] [MODEL_FOLDER ...]

For each example model folder (default: every models/**/model.json), saves the
optimised graph with attune, runs it in ONNX Runtime (ort-run) on the folder's
inputs/ and compares with its outputs/ (the PyTorch reference). Prints one line
per model: how many attention ops were written as ONNX Attention, how many kept
as attune.MultiHeadAttention (ONNX Runtime cannot run those: reported as "skip"),
and the worst max abs error. Exit 1 if any model that ORT can run disagrees;
exit 77 when ort-run is not available.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ORT_RUN = "/work/shared/tools/ort/ort-run"


def save_optimized(attune, folder, out_path):
    cmd = [attune, "inspect", os.path.join(folder, "model.onnx"), "--format", "json",
           "--save-optimized", out_path]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(res.stderr.strip())
    return json.loads(res.stdout)["saved_model"]


def ort_errors(ort_run, model, folder, opt, tmp):
    cmd = [ort_run, model, "--inputs", os.path.join(folder, "inputs"),
           "--expected", os.path.join(folder, "outputs"), "--out", os.path.join(tmp, "ort_out"),
           "--no-write", "--opt", opt, "--threads", "1"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        lines = res.stderr.strip().splitlines()
        return None, lines[-1] if lines else f"ort-run exit {res.returncode}"
    report = json.loads(res.stdout.strip().splitlines()[-1])
    return {name: o.get("max_abs_err") for name, o in report["outputs"].items()}, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="*")
    ap.add_argument("--attune", default=os.path.join(ROOT, "build", "tools", "attune"))
    ap.add_argument("--ort-run", default=ORT_RUN)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--opt", default="all", help="ONNX Runtime graph optimisation level")
    args = ap.parse_args()
    if not (os.path.exists(args.ort_run) or shutil.which(args.ort_run)):
        print(f"skip: ONNX Runtime tool {args.ort_run} not found")
        sys.exit(77)
    folders = args.folders or sorted(
        os.path.dirname(p) for p in glob.glob(os.path.join(ROOT, "models", "**", "model.json"), recursive=True))
    checked = ort_failed = attune_failed = 0
    for folder in folders:
        name = os.path.relpath(os.path.abspath(folder), os.path.join(ROOT, "models"))
        with tempfile.TemporaryDirectory() as tmp:
            saved_path = os.path.join(tmp, "optimized.onnx")
            try:
                saved = save_optimized(args.attune, folder, saved_path)
            except RuntimeError as e:
                print(f"FAIL {name:30s} attune: {e}")
                attune_failed += 1
                continue
            written, kept = saved["attention_ops"], len(saved["kept_as_multi_head_attention"])
            what = f"Attention x{written}, kept {kept}, opset {saved['default_opset']}"
            if kept:
                reasons = "; ".join(k["reason"] for k in saved["kept_as_multi_head_attention"])
                print(f"skip {name:30s} {what}: ONNX Runtime has no attune.MultiHeadAttention ({reasons})")
                continue
            errs, problem = ort_errors(args.ort_run, saved_path, folder, args.opt, tmp)
            checked += 1
            ok = errs is not None and all(isinstance(e, (int, float)) and e <= args.tol for e in errs.values())
            worst = max((e for e in errs.values() if isinstance(e, (int, float))), default=None) if errs else problem
            print(f"{'ok  ' if ok else 'FAIL'} {name:30s} {what}  max_abs_err {worst}")
            ort_failed += not ok
    skipped = len(folders) - checked - attune_failed
    print(f"{checked - ort_failed}/{checked} saved models match in ONNX Runtime within {args.tol}; "
          f"{skipped} skipped (attune.MultiHeadAttention kept); {attune_failed} not saved by attune")
    sys.exit(1 if ort_failed or attune_failed else 0)


if __name__ == "__main__":
    main()
