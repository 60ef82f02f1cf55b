#!/usr/bin/python3
"""Check that ONNX Runtime (via ort-run) reproduces every model's stored outputs.

usage: /usr/bin/python3 models/gen/ort_check.py [--tol 1e-4] [--ort-run PATH] [--opt all]
Prints one line per model (worst max abs error over its outputs); exit 1 on any failure.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

ORT_RUN = "/work/shared/tools/ort/ort-run"


def check(folder, ort_run, opt):
    cmd = [ort_run, os.path.join(folder, "model.onnx"), "--inputs",
           os.path.join(folder, "inputs"), "--expected", os.path.join(folder, "outputs"),
           "--out", os.path.join(folder, "ort_out"), "--no-write", "--opt", opt]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        return None, res.stderr.strip().splitlines()[-1:]
    report = json.loads(res.stdout.strip().splitlines()[-1])
    errs = {name: o.get("max_abs_err") for name, o in report["outputs"].items()}
    return errs, None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=os.path.dirname(here))
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--ort-run", default=ORT_RUN)
    ap.add_argument("--opt", default="all", help="ORT graph optimisation level")
    args = ap.parse_args()
    folders = sorted(os.path.dirname(p) for p in
                     glob.glob(os.path.join(args.models, "**", "model.json"), recursive=True))
    failed = 0
    for folder in folders:
        name = os.path.relpath(folder, args.models)
        errs, problem = check(folder, args.ort_run, args.opt)
        ok = errs is not None and all(isinstance(e, (int, float)) and e <= args.tol
                                      for e in errs.values())
        worst = max(errs.values(), key=lambda e: e if isinstance(e, (int, float)) else 1e30) \
            if errs else problem
        print(f"{'ok  ' if ok else 'FAIL'} {name:32s} max_abs_err {worst}")
        failed += not ok
    print(f"{len(folders) - failed}/{len(folders)} models match within {args.tol}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
