#!/usr/bin/env bash
# Attune vs ONNX Runtime on two CNNs exported from torchvision with random weights
# (models/gen/cnn_models.py): ResNet-50 and MobileNetV3-Large at 224x224, batch 1, their
# BatchNormalizations kept as nodes (Attune folds them into the Convs, ONNX Runtime too).
# Both engines run the same file and input, at 1 and 2 threads, interleaved, in one run of
# bench/compare_model.sh, which prints the machine's measured peaks first.
#
# usage: bench/compare_cnn.sh [--batch N] [compare_model.sh options, e.g. --threads "1 2" --rounds 3]
# needs: scripts/build.sh release attune_cli machine_peak; python3-torchvision (models/gen/setup.sh);
#        ../shared/tools/ort (ONNX Runtime).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
batch=1
if [ "${1:-}" = --batch ]; then
  [ $# -ge 2 ] || { echo "usage: $0 [--batch N] [compare_model.sh options]" >&2; exit 2; }
  batch=$2
  shift 2
fi
models=${ATTUNE_CNN_MODELS:-$root/build/bench_models/cnn_b$batch}
if [ ! -f "$models/mobilenet_v3/model.onnx" ]; then
  /usr/bin/python3 "$root/models/gen/cnn_models.py" "$models" --batch "$batch" > /dev/null
fi
exec bash "$root/bench/compare_model.sh" \
  "$models/resnet50/model.onnx" "$models/resnet50/inputs" \
  "$models/mobilenet_v3/model.onnx" "$models/mobilenet_v3/inputs" \
  --prefill "$@"
