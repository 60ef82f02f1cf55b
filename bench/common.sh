# Sourced by the comparison scripts: options, the two programs, and readers of their output.
# Options: --lengths "..." (sequence lengths, where the script takes them), --threads "...", --repeat K.
lengths=${lengths:-"128 512 1024 2048 4096"}
threads_list="1 2"
repeat=5
while [ $# -gt 0 ]; do
  case "$1" in
    --lengths) lengths=$2; shift 2 ;;
    --threads) threads_list=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    *) echo "usage: $usage" >&2; exit 2 ;;
  esac
done
ort_run=${ORT_RUN:-$root/../shared/tools/ort/ort-run}
attune=$root/build/tools/attune
[ -x "$attune" ] || { echo "error: build first: scripts/build.sh" >&2; exit 2; }
[ -x "$ort_run" ] || { echo "error: ONNX Runtime tool not found at $ort_run" >&2; exit 2; }
# A field of the last JSON line on stdin.
json_field() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }
# Peak RSS in MB from a /usr/bin/time -v log.
peak_mb() { awk '/Maximum resident set size/ {printf "%.0f", $6/1024}' "$1"; }
# One timed engine process: bench_process ort|attune MODEL OUT reads $inputs (a folder of .npy),
# $input_flags (attune's --input list for it), $n (threads), $repeat, $ort_home; writes OUT.json
# (the timings) and OUT.time (/usr/bin/time -v), and exits on failure.
bench_process() {
  local engine=$1 model=$2 out=$3
  if [ "$engine" = ort ]; then
    /usr/bin/time -v env NODE_PATH="$ort_home/node_modules" node "$root/bench/ort_bench.js" "$model" \
      --inputs "$inputs" --threads "$n" --repeat "$repeat" --warmup 1 > "$out.json" 2> "$out.time"
  else
    /usr/bin/time -v "$attune" bench "$model" "${input_flags[@]}" --threads "$n" --iterations "$repeat" \
      --warmup 1 --json > "$out.json" 2> "$out.time"
  fi || { echo "error: $engine failed on $model (threads $n):" >&2; cat "$out.time" >&2; exit 1; }
}
