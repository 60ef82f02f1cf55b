#!/usr/bin/env bash
# Attune vs ONNX Runtime on any model: the same .onnx, the same inputs (every DIR/<input>.npy),
# the same thread counts, one after the other; prints a Markdown table of medians and peak RSS.
#
# usage: bench/compare_model.sh MODEL.onnx INPUT_DIR [--threads "1 2"] [--repeat K]
# e.g.   bench/compare_model.sh build/bench-models/gpt2_small.onnx build/bench-models/inputs_gpt2_small_T128
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 MODEL.onnx INPUT_DIR [--threads \"1 2\"] [--repeat K]" >&2; exit 2; }
model=$1 inputs=$2
shift 2
threads_list="1 2"
repeat=5
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads_list=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    *) echo "usage: $0 MODEL.onnx INPUT_DIR [--threads \"...\"] [--repeat K]" >&2; exit 2 ;;
  esac
done
ort_run=${ORT_RUN:-$root/../shared/tools/ort/ort-run}
attune=$root/build/tools/attune
[ -x "$attune" ] || { echo "error: build first: scripts/build.sh" >&2; exit 2; }
[ -x "$ort_run" ] || { echo "error: ONNX Runtime tool not found at $ort_run" >&2; exit 2; }
input_flags=()
for f in "$inputs"/*.npy; do input_flags+=(--input "$(basename "$f" .npy)=$f"); done
median() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['median_ms'])"; }
peak_mb() { awk '/Maximum resident set size/ {printf "%.0f", $6/1024}' "$1"; }

echo "| threads | ORT ms | Attune ms | Attune speed-up | peak MB ORT / Attune |"
echo "|---|---|---|---|---|"
for n in $threads_list; do
  tmp=$(mktemp -d)
  /usr/bin/time -v "$ort_run" "$model" --inputs "$inputs" --out "$tmp" --threads "$n" --repeat "$repeat" \
    --warmup 1 --no-write > "$tmp/ort.json" 2> "$tmp/ort.time"
  /usr/bin/time -v "$attune" bench "$model" "${input_flags[@]}" --threads "$n" --iterations "$repeat" --warmup 1 \
    --json > "$tmp/attune.json" 2> "$tmp/attune.time"
  ort=$(median < "$tmp/ort.json"); at=$(median < "$tmp/attune.json")
  /usr/bin/python3 -c "print(f'| $n | {$ort:.2f} | {$at:.2f} | {$ort/$at:.2f}x | $(peak_mb "$tmp/ort.time") / $(peak_mb "$tmp/attune.time") |')"
  rm -rf "$tmp"
done
