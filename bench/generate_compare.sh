#!/usr/bin/env bash
# Decode speed of `attune generate` (its default cache: appended in place, one buffer per cache
# tensor the fused attention writes only the new rows of) against the loop a user writes for
# ONNX Runtime (one session.run per token, every present copied into the next past:
# bench/ort_generate.js) and against attune's own copy-per-step loop (--no-inplace-cache).
# Greedy, batch 1, the same prompt, the same thread counts, one after the other; prints a
# Markdown table of decode tokens/s, the cache path attune took (its JSON `cache`: "append",
# or "ping-pong" where attention is not fused) and whether the three produced the same tokens.
# Each first runs one untimed short generation (--warmup 1), so that one-time set-up is not
# counted.
#
# usage: bench/generate_compare.sh DECODE.onnx [--prompt-len 32] [--new 128] [--threads "1 2"]
# e.g.   bench/generate_compare.sh /work/benchmodels/hf_gpt2_decode.onnx
#        (written by: /usr/bin/python3 models/gen/bench_models.py --out DIR --only hf_gpt2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 DECODE.onnx [--prompt-len N] [--new N] [--threads \"1 2\"]" >&2; exit 2; }
model=$1
shift
prompt_len=32 new=128 threads_list="1 2"
while [ $# -gt 0 ]; do
  case "$1" in
    --prompt-len) prompt_len=$2; shift 2 ;;
    --new) new=$2; shift 2 ;;
    --threads) threads_list=$2; shift 2 ;;
    *) echo "usage: $0 DECODE.onnx [--prompt-len N] [--new N] [--threads \"1 2\"]" >&2; exit 2 ;;
  esac
done
attune=$root/build/tools/attune
[ -x "$attune" ] || { echo "error: build first: scripts/build.sh release attune_cli" >&2; exit 2; }
ort_home=${ORT_HOME:-$HOME/.cache/ort-reference}
"$root/../shared/tools/ort/setup.sh" >&2 2>/dev/null || [ -d "$ort_home/node_modules/onnxruntime-node" ] ||
  { echo "error: onnxruntime-node not installed (see /work/shared/tools/ort/README.md)" >&2; exit 2; }
# A fixed prompt of ids below 97, valid for the small test GPTs and for GPT-2's vocabulary.
ids=$(/usr/bin/python3 -c "print(','.join(str((i * 37 + 11) % 97) for i in range($prompt_len)))")
field() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }

name=$(basename "$model"); [ "$name" != model.onnx ] || name=$(basename "$(dirname "$model")")/$name
echo "model $name, prompt $prompt_len tokens, $new new tokens, greedy, batch 1"
echo
echo "| threads | ORT tokens/s | Attune tokens/s | cache path | Attune copy-per-step tokens/s | Attune vs ORT | Attune vs copy | same tokens |"
echo "|---|---|---|---|---|---|---|---|"
for n in $threads_list; do
  tmp=$(mktemp -d)
  NODE_PATH="$ort_home/node_modules" node "$root/bench/ort_generate.js" "$model" --prompt-ids "$ids" \
    --max-new-tokens "$new" --threads "$n" --warmup 1 > "$tmp/ort.json"
  "$attune" generate "$model" --prompt-ids "$ids" --max-new-tokens "$new" --threads "$n" --warmup 1 --json \
    > "$tmp/append.json"
  "$attune" generate "$model" --prompt-ids "$ids" --max-new-tokens "$new" --threads "$n" --warmup 1 --json --no-inplace-cache \
    > "$tmp/copy.json"
  ort=$(field tokens_per_s < "$tmp/ort.json")
  append=$(field tokens_per_s < "$tmp/append.json")
  path=$(field cache < "$tmp/append.json")
  copy=$(field tokens_per_s < "$tmp/copy.json")
  same=no
  if [ "$(field generated_ids < "$tmp/ort.json")" = "$(field generated_ids < "$tmp/append.json")" ] &&
     [ "$(field generated_ids < "$tmp/copy.json")" = "$(field generated_ids < "$tmp/append.json")" ]; then same=yes; fi
  /usr/bin/python3 -c "print(f'| $n | {$ort:.1f} | {$append:.1f} | $path | {$copy:.1f} | {$append/$ort:.2f}x | {$append/$copy:.2f}x | $same |')"
  rm -rf "$tmp"
done
