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
usage="$0 MODEL.onnx INPUT_DIR [--threads \"...\"] [--repeat K]"
source "$root/bench/common.sh"
input_flags=()
for f in "$inputs"/*.npy; do input_flags+=(--input "$(basename "$f" .npy)=$f"); done

echo "| threads | ORT ms | Attune ms | Attune speed-up | peak MB ORT / Attune |"
echo "|---|---|---|---|---|"
for n in $threads_list; do
  tmp=$(mktemp -d)
  /usr/bin/time -v "$ort_run" "$model" --inputs "$inputs" --out "$tmp" --threads "$n" --repeat "$repeat" \
    --warmup 1 --no-write > "$tmp/ort.json" 2> "$tmp/ort.time"
  /usr/bin/time -v "$attune" bench "$model" "${input_flags[@]}" --threads "$n" --iterations "$repeat" --warmup 1 \
    --json > "$tmp/attune.json" 2> "$tmp/attune.time"
  ort=$(json_field median_ms < "$tmp/ort.json"); at=$(json_field median_ms < "$tmp/attune.json")
  /usr/bin/python3 -c "print(f'| $n | {$ort:.2f} | {$at:.2f} | {$ort/$at:.2f}x | $(peak_mb "$tmp/ort.time") / $(peak_mb "$tmp/attune.time") |')"
  rm -rf "$tmp"
done
