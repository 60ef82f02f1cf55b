#!/usr/bin/env bash
# A quantized model in Attune and in ONNX Runtime, and its float32 original in Attune: the same
# inputs, the same thread counts, interleaved in one run (R rounds; each round one process per
# engine and file, in a rotating order; medians over every timed run of all rounds). Prints the
# CPU, the peaks measured in this run (fp32 FMA and read bandwidth from bench/machine_peak,
# int8 vpdpbusd and bf16 vdpbf16ps from bench/quant_peak), then one Markdown row per case:
# medians, Attune's speed-up over ONNX Runtime on the same file (of the medians, and of each
# engine's fastest run: the one least disturbed on a shared machine) and over its own fp32 run, the
# weight bytes read per token against the read bandwidth, and peak RSS.
#
# usage: bench/compare_quantized.sh QUANT.onnx FP32.onnx INPUT_DIR [QUANT FP32 INPUT_DIR ...]
#          [--threads "1 2"] [--repeat K] [--rounds R]
# e.g.   bench/compare_quantized.sh q4/hf_gpt2_decode.onnx bm/hf_gpt2_decode.onnx bm/inputs_hf_gpt2_decode_P127
# Quantized files: /usr/bin/python3 models/gen/matmul_nbits_writer.py FP32.onnx OUT.onnx --convention ort|genai|tfjs
# needs: scripts/build.sh release attune_cli machine_peak quant_peak, and ../shared/tools/ort.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="$0 QUANT.onnx FP32.onnx INPUT_DIR [...] [--threads \"...\"] [--repeat K] [--rounds R]"
cases=()
while [ $# -gt 0 ] && [[ $1 != --* ]]; do cases+=("$1"); shift; done
if [ ${#cases[@]} -lt 3 ] || [ $((${#cases[@]} % 3)) -ne 0 ]; then echo "usage: $usage" >&2; exit 2; fi
rounds=3
rest=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) [ $# -ge 2 ] || { echo "usage: $usage" >&2; exit 2; }; rounds=$2; shift 2 ;;
    *) rest+=("$1"); shift ;;
  esac
done
set -- ${rest[@]+"${rest[@]}"}
source "$root/bench/common.sh"  # --threads, --repeat; $attune, $ort_run
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "error: --rounds needs a positive integer" >&2; exit 2; }
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "error: --repeat needs a positive integer" >&2; exit 2; }
for ((i = 0; i < ${#cases[@]}; i += 3)); do
  for f in "${cases[i]}" "${cases[i + 1]}"; do [ -f "$f" ] || { echo "error: no model $f" >&2; exit 2; }; done
  [ -d "${cases[i + 2]}" ] || { echo "error: no input folder ${cases[i + 2]}" >&2; exit 2; }
done
ort_home=${ORT_HOME:-$HOME/.cache/ort-reference}
"$(dirname "$ort_run")/setup.sh" >&2 2>/dev/null || [ -d "$ort_home/node_modules/onnxruntime-node" ] ||
  { echo "error: onnxruntime-node not installed (see ../shared/tools/ort/README.md)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

echo "cpu: $(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo | sed 's/^ *//'), family $(awk -F: '/cpu family/ {print $2+0; exit}' /proc/cpuinfo), $(nproc) cpus"
for p in machine_peak quant_peak; do
  if [ -x "$root/build/bench/$p" ]; then echo "$p: $("$root/build/bench/$p" --threads "$(nproc)")"
  else echo "$p: not built (scripts/build.sh release $p)"; fi
done

# One process: $1 = attune_q | ort_q | attune_fp32, $2 = round; writes $case/$1.$2.{json,time}.
run_engine() {
  local model=$quant engine=attune
  [ "$1" = attune_fp32 ] && model=$fp32
  [ "$1" = ort_q ] && engine=ort
  bench_process "$engine" "$model" "$case/$1.$2"
}

echo
echo "| case | threads | Attune q ms | ORT q ms | Attune fp32 ms | vs ORT | vs ORT, fastest runs | vs fp32 | weights MB | Attune GB/s | RSS q / ORT / fp32 MB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
engines=(attune_q ort_q attune_fp32)
for ((c = 0; c < ${#cases[@]}; c += 3)); do
  quant=${cases[c]} fp32=${cases[c + 1]} inputs=${cases[c + 2]}
  input_flags=()
  for f in "$inputs"/*.npy; do input_flags+=(--input "$(basename "$f" .npy)=$f"); done
  for n in $threads_list; do
    case=$work/case.$c.$n
    mkdir -p "$case"
    for ((r = 1; r <= rounds; r++)); do
      for ((e = 0; e < 3; e++)); do run_engine "${engines[(e + r) % 3]}" "$r"; done
    done
    /usr/bin/python3 "$root/bench/compare_quantized_row.py" "$case" "$quant" "$inputs" "$n"
  done
done
