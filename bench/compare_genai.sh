#!/usr/bin/env bash
# Attune vs ONNX Runtime on a decoder in the onnxruntime-genai builder's format
# (GroupQueryAttention, SkipSimplifiedLayerNormalization, genai input/output names), of the
# bench LLaMA's shape (models/gen/bench_models.py: d_model 2048, 32 query heads and 4 K/V
# heads of 64, SwiGLU 5632, vocab 32000, 4 layers), fp32: prefill T=128 (empty past) and one
# decode step at past 511, at 1 and 2 threads, through bench/compare_model.sh (the same file
# and inputs for both engines, interleaved runs, the machine's peaks of the same run).
#
# usage: bench/compare_genai.sh [--workdir DIR] [--threads "1 2"] [--repeat K] [--rounds R] [--layers L]
# needs: scripts/build.sh release attune machine_peak, and ../shared/tools/ort (ONNX Runtime).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
workdir=${TMPDIR:-/tmp}/attune_genai_bench
layers=4
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workdir) workdir=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    --threads | --repeat | --rounds) pass+=("$1" "$2"); shift 2 ;;
    *) echo "usage: $0 [--workdir DIR] [--threads \"1 2\"] [--repeat K] [--rounds R] [--layers L]" >&2; exit 2 ;;
  esac
done
mkdir -p "$workdir"
writer="$root/tests/contrib/genai_decoder.py"
shape=(--hidden 2048 --heads 32 --kv-heads 4 --inter 5632 --vocab 32000 --layers "$layers" --max-pos 1024)
model="$workdir/genai_llama.onnx"
if [ ! -f "$model" ]; then
  /usr/bin/python3 "$writer" "$model" "${shape[@]}" --inputs "$workdir/prefill_T128" --past 0 --seq 128
  /usr/bin/python3 - "$workdir" "$layers" <<'PY'
import os, sys
import numpy as np
work, layers = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(3)
d = os.path.join(work, "decode_P511")
os.makedirs(d, exist_ok=True)
np.save(os.path.join(d, "input_ids.npy"), rng.integers(0, 32000, (1, 1)).astype(np.int64))
np.save(os.path.join(d, "attention_mask.npy"), np.ones((1, 512), np.int64))
for i in range(layers):
    for kind in ("key", "value"):
        np.save(os.path.join(d, f"past_key_values.{i}.{kind}.npy"), (rng.standard_normal((1, 4, 511, 64)) * 0.5).astype(np.float32))
PY
fi
echo "## genai-format decoder, fp32 ($layers layers of the bench LLaMA's shape)"
echo "### prefill T=128"
bash "$root/bench/compare_model.sh" "$model" "$workdir/prefill_T128" --prefill ${pass[@]+"${pass[@]}"}
echo "### decode at past 511"
bash "$root/bench/compare_model.sh" "$model" "$workdir/decode_P511" --decode --no-peak ${pass[@]+"${pass[@]}"}
