"""python3 -m attune run|inspect: the attune CLI's common commands, for people who live in Python.

    python3 -m attune run MODEL.onnx --input NAME=FILE.npy ... [--output-dir DIR] [session flags]
    python3 -m attune inspect MODEL.onnx [--format text|json] [--output FILE] [--save-optimized OUT]

Session flags as in the CLI: --threads N, --no-fuse, --verify-fusion, --attention-backend B,
--disable-pass NAME (repeatable), --max-tensor-mb N. Exit codes as in the CLI: 2 for bad usage,
model or input; 1 for internal failures.
"""

import argparse
import json
import os
import re
import sys
import time

import numpy as np

import attune


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # exit 2 with the CLI's one-line "error: ..." format
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


def _add_session_flags(p):
    p.add_argument("model")
    p.add_argument("--threads", type=int, default=0, help="threads per run (default: all cores)")
    p.add_argument("--no-fuse", action="store_true", help="skip the fusions")
    p.add_argument("--verify-fusion", action="store_true", help="check each fusion numerically")
    p.add_argument("--attention-backend", default="auto", help="auto, simd, onednn or reference")
    p.add_argument("--disable-pass", action="append", default=[], metavar="NAME", help="skip one pass")
    p.add_argument("--max-tensor-mb", type=int, default=None, help="largest tensor allowed, in MiB")
    p.add_argument("--weights", default=None, help="compress product weights at load: bf16, int8 or int4")
    p.add_argument("--block", type=int, default=32, help="--weights block size along K (default 32)")
    p.add_argument("--symmetric", action="store_true", help="--weights without zero points")
    p.add_argument("--accuracy-level", type=int, default=0, help="--weights accuracy_level (4: int8 activations)")
    p.add_argument("--keep-lm-head", action="store_true", help="--weights leaves graph-output products in float")


def _session(args):
    return attune.InferenceSession(args.model, threads=args.threads, fuse=not args.no_fuse,
                                   verify_fusion=args.verify_fusion,
                                   attention_backend=args.attention_backend,
                                   disabled_passes=args.disable_pass, max_tensor_mb=args.max_tensor_mb,
                                   weights=args.weights, weight_block=args.block,
                                   weight_symmetric=args.symmetric, weight_accuracy_level=args.accuracy_level,
                                   keep_lm_head=args.keep_lm_head)


def _sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def _run(args):
    feeds = {}
    for item in args.input:
        name, sep, path = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--input needs NAME=FILE, got {item!r}")
        if not path.endswith(".npy"):
            raise ValueError(f"--input {name}: only .npy files are read here, got {path!r}")
        feeds[name] = np.load(path, allow_pickle=False)
    start = time.perf_counter()
    session = _session(args)
    loaded = time.perf_counter()
    outputs = session.run(None, feeds)
    ran = time.perf_counter()
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
    fusions = session.fusion_report()["fusions"]
    live = [f for f in fusions if not f["undone"]]
    causal = sum(f["mask"] == "causal" for f in live)
    window = sum(f["mask"] == "window" for f in live)
    print(f"model      {args.model}")
    print(f"fusions    {len(fusions)} attention ({causal} causal, {window} window)"
          + ("  [--no-fuse]" if args.no_fuse else ""))
    print(f"load       {(loaded - start) * 1e3:.1f} ms\nrun        {(ran - loaded) * 1e3:.2f} ms")
    for arg, value in zip(session.get_outputs(), outputs):
        written = ""
        if args.output_dir:
            path = os.path.join(args.output_dir, _sanitize(arg.name) + ".npy")
            np.save(path, value)
            written = f"  -> {path}"
        print(f"output     {arg.name} {value.dtype}{list(value.shape)}{written}")


def _dims(shape):
    if shape is None:
        return "[?]"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _inspect(args):
    session = _session(args)
    report = session.fusion_report()
    if args.save_optimized:
        session.save_optimized_model(args.save_optimized)
    if args.format == "json":
        text = json.dumps(report, indent=2) + "\n"
    else:
        lines = [f"model    {args.model}"]
        lines += [f"input    {i['name']} {i['dtype']}{_dims(i['shape'])}" for i in report["inputs"]]
        lines += [f"output   {o['name']} {o['dtype']}{_dims(o['shape'])}" for o in report["outputs"]]
        lines.append("ops      " + ", ".join(
            f"{op} {report['ops_before'].get(op, 0)} -> {report['ops_after'].get(op, 0)}"
            for op in sorted(set(report["ops_before"]) | set(report["ops_after"]))
            if report["ops_before"].get(op, 0) != report["ops_after"].get(op, 0)))
        for f in report["fusions"]:
            lines.append(f"fused    {f['node']} {f['op']} ({f['pattern']}): heads {f['num_heads']}, "
                         f"head_dim {f['head_dim']}, mask {f['mask']}"
                         + ("  [undone]" if f["undone"] else ""))
        for r in report["rejected"]:
            lines.append(f"rejected {r['at']} ({r['pattern']}): {r['reason']}")
        text = "\n".join(lines) + "\n"
    if args.output:
        with open(args.output, "w") as out:
            out.write(text)
    else:
        sys.stdout.write(text)


def main(argv=None):
    parser = _Parser(prog="python3 -m attune", description="Attune's run and inspect commands.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = commands.add_parser("run", help="run the model once and print each output's type and shape")
    _add_session_flags(run)
    run.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    run.add_argument("--output-dir", default="", help="write each output as DIR/<name>.npy")
    inspect = commands.add_parser("inspect", help="show what the optimiser did")
    _add_session_flags(inspect)
    inspect.add_argument("--format", choices=("text", "json"), default="text")
    inspect.add_argument("--output", default="", help="write the report to FILE instead of stdout")
    inspect.add_argument("--save-optimized", default="", metavar="OUT.onnx",
                         help="write the optimised graph as ONNX")
    args = parser.parse_args(argv)
    try:
        (_run if args.command == "run" else _inspect)(args)
    except (ValueError, NotImplementedError, MemoryError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
