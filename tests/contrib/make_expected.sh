#!/usr/bin/env bash
# Runs every case under tests/contrib/data in ONNX Runtime (the reference) and
# stores its outputs as data/<case>/expected/*.npy.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ort=${ORT_RUN:-$here/../../../shared/tools/ort/ort-run}
for d in "$here"/data/*/; do
  [ -f "$d/model.onnx" ] || continue
  [ -f "$d/REFERENCE" ] && continue  # a reference written by the generator
  rm -rf "$d/expected"
  # A form ONNX Runtime's CPU kernels refuse has an equivalent graph beside it.
  model="$d/model.onnx"
  [ -f "$d/reference.onnx" ] && model="$d/reference.onnx"
  "$ort" "$model" --inputs "$d/inputs" --out "$d/expected" > /dev/null || { echo "ORT failed on $d" >&2; exit 1; }
done
