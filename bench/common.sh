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
