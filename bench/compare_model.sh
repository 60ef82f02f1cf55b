#!/usr/bin/env bash
# Attune vs ONNX Runtime on any model: the same .onnx, the same inputs (every DIR/<input>.npy),
# the same thread counts. For each case the two engines run interleaved: R rounds, each one
# process of each (in turn first) with 1 warm-up and K timed runs, and the medians are over all
# timed runs of an engine. Prints the CPU and the machine's measured peak (bench/machine_peak)
# first, then per model a Markdown table: medians, speed-up, peak RSS, load time, fused
# attention ops and an efficiency figure (GFLOP/s against the FMA peak for prefill, weight GB/s
# against the read bandwidth for decode).
#
# usage: bench/compare_model.sh MODEL.onnx INPUT_DIR [MODEL2.onnx INPUT_DIR2 ...]
#          [--threads "1 2"] [--repeat K] [--rounds R] [--busy | --load "quiet busy"]
#          [--decode | --prefill] [--no-peak]
#   --threads "..."   thread counts (default "1 2")
#   --repeat K        timed runs per process (default 5)
#   --rounds R        processes per engine and case, interleaved (default 3)
#   --busy            every case also with a busy core: a spinning process on one core
#                     (same as --load "quiet busy"; --load busy runs only that)
#   --decode, --prefill  the efficiency figure to print; default: decode when
#                     INPUT_DIR/input_ids.npy has 1 query row
#   --no-peak         skip bench/machine_peak (no efficiency column figures)
# e.g.   bench/compare_model.sh /work/benchmodels/hf_gpt2_decode.onnx /work/benchmodels/inputs_hf_gpt2_decode_P127 \
#          --threads 1 --repeat 2 --rounds 1
# needs: scripts/build.sh release attune_cli machine_peak, and ../shared/tools/ort (ONNX Runtime).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="$0 MODEL.onnx INPUT_DIR [MODEL INPUT_DIR ...] [--threads \"...\"] [--repeat K] [--rounds R] [--busy | --load \"quiet busy\"] [--decode | --prefill] [--no-peak]"
models=()
while [ $# -gt 0 ] && [[ $1 != --* ]]; do models+=("$1"); shift; done
if [ ${#models[@]} -lt 2 ] || [ $((${#models[@]} % 2)) -ne 0 ]; then echo "usage: $usage" >&2; exit 2; fi
rounds=3 loads=quiet kind= measure_peak=1
rest=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds | --load) [ $# -ge 2 ] || { echo "usage: $usage" >&2; exit 2; } ;;&
    --rounds) rounds=$2; shift 2 ;;
    --busy) loads="quiet busy"; shift ;;
    --load) loads=$2; shift 2 ;;
    --decode) kind=decode; shift ;;
    --prefill) kind=prefill; shift ;;
    --no-peak) measure_peak=0; shift ;;
    *) rest+=("$1"); shift ;;
  esac
done
set -- ${rest[@]+"${rest[@]}"}
source "$root/bench/common.sh"  # --threads, --repeat; $attune, $ort_run
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "error: --rounds needs a positive integer" >&2; exit 2; }
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "error: --repeat needs a positive integer" >&2; exit 2; }
for load in $loads; do
  case "$load" in quiet | busy) ;; *) echo "error: --load takes quiet and/or busy, got '$load'" >&2; exit 2 ;; esac
done
[ -n "$loads" ] || { echo "error: --load needs quiet and/or busy" >&2; exit 2; }
for ((i = 0; i < ${#models[@]}; i += 2)); do
  [ -f "${models[i]}" ] || { echo "error: no model ${models[i]}" >&2; exit 2; }
  [ -d "${models[i + 1]}" ] || { echo "error: no input folder ${models[i + 1]}" >&2; exit 2; }
done
# ONNX Runtime runs in bench/ort_bench.js (ort-run's session options; it reports every timed
# run, which the medians over all rounds need) from the install ort-run's setup.sh makes.
ort_home=${ORT_HOME:-$HOME/.cache/ort-reference}
"$(dirname "$ort_run")/setup.sh" >&2 2>/dev/null || [ -d "$ort_home/node_modules/onnxruntime-node" ] ||
  { echo "error: onnxruntime-node not installed (see ../shared/tools/ort/README.md)" >&2; exit 2; }
table() { /usr/bin/python3 "$root/bench/compare_model_table.py" "$@"; }

work=$(mktemp -d)
busy_pid=
stop_busy() {
  if [ -n "$busy_pid" ]; then
    kill "$busy_pid" 2>/dev/null || true
    wait "$busy_pid" 2>/dev/null || true
    busy_pid=
  fi
}
# A competing load: one process spinning on the CPU (not niced), until stop_busy or exit.
start_busy() {
  (trap - EXIT; while :; do :; done) &
  busy_pid=$!
}
trap 'stop_busy; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# Runs one engine process of a case; $1 = ort or attune, $2 = round, writes $case/$1.$2.{json,time}.
run_engine() { bench_process "$1" "$model" "$case/$1.$2"; }

# The machine's fp32 FMA peak and read bandwidth, measured first, before any load is started.
peak_json=-
machine_peak=$root/build/bench/machine_peak
if [ "$measure_peak" = 0 ]; then
  table machine - "skipped (--no-peak)"
elif [ -x "$machine_peak" ]; then
  peak_json=$work/peak.json
  "$machine_peak" --threads "$(nproc)" > "$peak_json"
  table machine "$peak_json"
else
  table machine -
fi

for ((m = 0; m < ${#models[@]}; m += 2)); do
  model=${models[m]} inputs=${models[m + 1]}
  input_flags=()
  for f in "$inputs"/*.npy; do input_flags+=(--input "$(basename "$f" .npy)=$f"); done
  model_kind=${kind:-$(table kind "$inputs")}
  table heading "$model" "$inputs" "$model_kind" "$rounds" "$repeat" "$peak_json"
  first_case=
  for n in $threads_list; do
    for load in $loads; do
      case=$work/case.$m.$n.$load
      mkdir -p "$case"
      first_case=${first_case:-$case}
      [ "$load" = busy ] && start_busy
      for ((r = 1; r <= rounds; r++)); do
        if ((r % 2)); then run_engine ort "$r"; run_engine attune "$r"
        else run_engine attune "$r"; run_engine ort "$r"; fi
      done
      stop_busy
      table row "$case" "$n" "$load" "$model_kind" "$peak_json"
    done
  done
  echo
  table work "$first_case"
done
