#!/usr/bin/env bash
# Attune vs ONNX Runtime on the one-layer causal multi-head model (d_model 768, 12 heads):
# ONNX Runtime on the unfused export, ONNX Runtime on the same weights with its own fused
# Attention op, and Attune (which fuses the export itself). Same inputs, same thread counts,
# one after the other in this script; prints a Markdown table of medians and peak RSS.
#
# usage: bench/compare_ort.sh [--lengths "128 512 1024 2048 4096"] [--threads "1 2"] [--repeat K]
# needs: a release build (scripts/build.sh), /usr/bin/python3 with torch + onnx for the models
#        (bash models/gen/setup.sh), and ../shared/tools/ort (ONNX Runtime) beside the repository.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="$0 [--lengths \"...\"] [--threads \"...\"] [--repeat K]"
source "$root/bench/common.sh"
models=$root/build/bench-models
if [ ! -f "$models/mha_causal_768.onnx" ]; then
  /usr/bin/python3 "$root/models/gen/bench_models.py" --out "$models" --only mha >&2
fi
flops() {  # useful causal attention FLOPs: 4·H·D·T(T+1)/2 with H·D = 768
  /usr/bin/python3 -c "print(4*768*$1*($1+1)/2)"; }

echo "| T | threads | ORT unfused ms | ORT fused-op ms | Attune ms | vs ORT unfused | vs ORT fused | Attune attention GFLOP/s | peak MB ORT unfused / fused / Attune |"
echo "|---|---|---|---|---|---|---|---|---|"
for t in $lengths; do
  inputs=$models/inputs_mha_causal_768_T$t
  for n in $threads_list; do
    tmp=$(mktemp -d)
    /usr/bin/time -v "$ort_run" "$models/mha_causal_768.onnx" --inputs "$inputs" --out "$tmp" --threads "$n" \
      --repeat "$repeat" --warmup 1 --no-write > "$tmp/ou.json" 2> "$tmp/ou.time"
    /usr/bin/time -v "$ort_run" "$models/mha_causal_768_ort_fused.onnx" --inputs "$inputs" --out "$tmp" \
      --threads "$n" --repeat "$repeat" --warmup 1 --no-write > "$tmp/of.json" 2> "$tmp/of.time"
    /usr/bin/time -v "$attune" bench "$models/mha_causal_768.onnx" --input "x=$inputs/x.npy" --threads "$n" \
      --iterations "$repeat" --warmup 1 --json > "$tmp/at.json" 2> "$tmp/at.time"
    ou=$(json_field median_ms < "$tmp/ou.json"); of=$(json_field median_ms < "$tmp/of.json")
    at=$(json_field median_ms < "$tmp/at.json")
    # Attention-op time from one profiled run: the MultiHeadAttention row of the op summary.
    "$attune" bench "$models/mha_causal_768.onnx" --input "x=$inputs/x.npy" --threads "$n" --iterations 1 \
      --warmup 1 --profile "$tmp/trace.json" > "$tmp/profile.txt"
    attn_ms=$(awk '$1 == "MultiHeadAttention" {print $2}' "$tmp/profile.txt")
    gflops=$( [ -n "$attn_ms" ] && /usr/bin/python3 -c "print(f'{$(flops "$t")/($attn_ms*1e6):.1f} ({100*$(flops "$t")/($attn_ms*1e6)/(117*$n):.0f}% of peak)')" || echo "n/a")
    /usr/bin/python3 - "$t" "$n" "$ou" "$of" "$at" "$gflops" "$(peak_mb "$tmp/ou.time")" "$(peak_mb "$tmp/of.time")" \
      "$(peak_mb "$tmp/at.time")" <<'PY'
import sys
t, n, ou, of, at, gf, pu, pf, pa = sys.argv[1:]
ou, of, at = float(ou), float(of), float(at)
print(f"| {t} | {n} | {ou:.2f} | {of:.2f} | {at:.2f} | {ou/at:.2f}x | {of/at:.2f}x | {gf} | {pu} / {pf} / {pa} |")
PY
    rm -rf "$tmp"
  done
done
