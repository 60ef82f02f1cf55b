#!/usr/bin/env bash
# Dynamic int8 against ONNX Runtime: writes the dynamic-int8 copy of an fp32 model as ONNX
# Runtime's quantize_dynamic lays it out (tests/quantize_ops/quantize_dynamic_writer.py), then
# runs bench/compare_model.sh on it and on the fp32 original: Attune and ONNX Runtime on the same
# file, the same inputs, interleaved, at each thread count, with the machine's peaks of the run.
#
# usage: bench/compare_int8.sh MODEL.onnx INPUT_DIR [--weight-type int8|uint8] [--per-channel]
#          [--keep DIR] [compare_model.sh options: --threads "1 2" --repeat K --rounds R ...]
#   --weight-type  the weights' type (default int8, symmetric; uint8 is asymmetric)
#   --per-channel  one scale and zero point per output column (default: per tensor)
#   --keep DIR     write the quantized model into DIR (kept) instead of a temporary folder
# e.g.   /usr/bin/python3 models/gen/bench_models.py --out /work/benchmodels --only gpt2
#        bench/compare_int8.sh /work/benchmodels/gpt2_small.onnx /work/benchmodels/inputs_gpt2_small_T128
# needs: scripts/build.sh release attune machine_peak, and ../shared/tools/ort (ONNX Runtime).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="$0 MODEL.onnx INPUT_DIR [--weight-type int8|uint8] [--per-channel] [--keep DIR] [compare_model.sh options]"
[ $# -ge 2 ] || { echo "usage: $usage" >&2; exit 2; }
model=$1 inputs=$2
shift 2
[ -f "$model" ] || { echo "error: no model $model" >&2; exit 2; }
[ -d "$inputs" ] || { echo "error: no input folder $inputs" >&2; exit 2; }
writer_flags=() keep= rest=()
while [ $# -gt 0 ]; do
  case "$1" in
    --weight-type) [ $# -ge 2 ] || { echo "usage: $usage" >&2; exit 2; }; writer_flags+=(--weight-type "$2"); shift 2 ;;
    --per-channel) writer_flags+=(--per-channel); shift ;;
    --keep) [ $# -ge 2 ] || { echo "usage: $usage" >&2; exit 2; }; keep=$2; shift 2 ;;
    *) rest+=("$1"); shift ;;
  esac
done
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  out=$keep
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
quantized=$out/$(basename "$model" .onnx)_dynamic_int8.onnx
/usr/bin/python3 "$root/tests/quantize_ops/quantize_dynamic_writer.py" "$model" "$quantized" \
  ${writer_flags[@]+"${writer_flags[@]}"}
echo "dynamic int8 file: $quantized (${writer_flags[*]:-int8 per tensor})"
echo "Attune fuses its products: $("$root/build/tools/attune" inspect "$quantized" --format json |
  /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["ops_after"].get("DynamicQuantizeMatMul", 0), "DynamicQuantizeMatMul,", r["ops_after"].get("MatMulInteger", 0), "MatMulInteger left")')"
echo
bash "$root/bench/compare_model.sh" "$quantized" "$inputs" "$model" "$inputs" --prefill ${rest[@]+"${rest[@]}"}
