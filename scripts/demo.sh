#!/usr/bin/env bash
# Sets up, builds and runs a bundled model through attune: its fusion report, then the run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:-$root/models/gpt_maskfill}
"$root/scripts/setup.sh"
"$root/scripts/build.sh" release attune_cli
attune="$root/build/tools/attune"
inputs=()
for f in "$model"/inputs/*.npy; do inputs+=(--input "$(basename "$f" .npy)=$f"); done
echo "== attune inspect $(basename "$model")"
"$attune" inspect "$model/model.onnx"
echo
echo "== attune run $(basename "$model")"
"$attune" run "$model/model.onnx" "${inputs[@]}" --output-dir "$root/build/demo-output"
