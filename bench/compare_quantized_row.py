"""One Markdown row of bench/compare_quantized.sh from a case folder of
<engine>.<round>.json (Attune: bench --json; ONNX Runtime: ort_bench.js) and .time
(/usr/bin/time -v) files."""
import glob
import json
import os
import statistics
import sys

import onnx


def times(case, engine):
    out = []
    for path in sorted(glob.glob(os.path.join(case, engine + ".*.json"))):
        j = json.loads(open(path).read().strip().splitlines()[-1])
        out += j.get("times_ms") or j.get("latencies_ms") or [j["median_ms"]]
    return out


def rss(case, engine):
    peaks = []
    for path in glob.glob(os.path.join(case, engine + ".*.time")):
        for line in open(path):
            if "Maximum resident set size" in line:
                peaks.append(int(line.split()[-1]) / 1024)
    return max(peaks) if peaks else float("nan")


def weight_mb(model_path):
    """Bytes of every initializer (the weights a decode step reads once)."""
    m = onnx.load(model_path, load_external_data=False)
    return sum(len(t.raw_data) for t in m.graph.initializer) / 1e6


def main():
    case, quant, inputs, threads = sys.argv[1:5]
    med = {e: statistics.median(times(case, e)) for e in ("attune_q", "ort_q", "attune_fp32")}
    # The fastest run of each engine: on a shared machine the one least disturbed by other work.
    fastest = {e: min(times(case, e)) for e in ("attune_q", "ort_q")}
    mb = weight_mb(quant)
    name = f"{os.path.basename(quant)} {os.path.basename(os.path.normpath(inputs))}"
    print(f"| {name} | {threads} | {med['attune_q']:.2f} | {med['ort_q']:.2f} | {med['attune_fp32']:.2f} | "
          f"{med['ort_q'] / med['attune_q']:.2f}x | {fastest['ort_q'] / fastest['attune_q']:.2f}x | "
          f"{med['attune_fp32'] / med['attune_q']:.2f}x | {mb:.0f} | "
          f"{mb / med['attune_q']:.1f} | {rss(case, 'attune_q'):.0f} / {rss(case, 'ort_q'):.0f} / "
          f"{rss(case, 'attune_fp32'):.0f} |", flush=True)


if __name__ == "__main__":
    main()
