#!/usr/bin/env bash
# Checks that no folder includes a folder above it (docs/ARCHITECTURE.md):
#
#   core/                        0  IR, status macros, strings, log, buffer pool
#   ops/  importer/  tokenizer/  1  kernels; ONNX import/export; text <-> token ids (peers)
#   engine/pattern/  engine/io/  2  the matcher; .npy files
#   engine/rewrite/              3  rewrite plan, verify mode, subgraph cuts, dim binding
#   engine/passes/               4  the passes (run subgraphs through PassContext's evaluator)
#   engine/exec/                 5  the executor
#   engine/ (session*)           6  the session behind the public API
#   tools/  bench/  fuzz/        7  the CLI; benchmarks; fuzz targets (peers)
#   tests/                       8  may include anything
#
# The public API, include/attune/ ("attune/..."), may be included by every
# folder: it is the vocabulary (Tensor, ElementType, Session) that core/
# implements. It includes nothing of ours but itself, and examples/ and
# server/ (code as an embedder writes it) include nothing of ours but it and
# themselves.
#
# A folder may include itself and any folder of a lower number. Every
# #include "..." of our own headers is checked; a violation names the file,
# the line and the include, and the script exits 1.
#
# Usage: check_layers.sh [ROOT] [-v]     (-v lists every include it checked)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
verbose=0
for arg in "$@"; do
  case "$arg" in
    -v) verbose=1 ;;
    *) root=$(cd "$arg" && pwd) ;;
  esac
done
cd "$root" || exit 2

# Layer of a path (a source file or an include), longest prefix first: sets
# layer_rank and layer_name, or empties them when the path is not ours. (It sets
# variables rather than printing: a subshell per include made the check take
# minutes on a busy two-core machine.)
layer_of() {
  layer_rank= layer_name=
  case "$1" in
    attune/*|include/attune/*) layer_rank=-1 layer_name=include/attune ;;
    core/*) layer_rank=0 layer_name=core ;;
    ops/*) layer_rank=1 layer_name=ops ;;
    importer/*) layer_rank=1 layer_name=importer ;;
    tokenizer/*) layer_rank=1 layer_name=tokenizer ;;
    engine/pattern/*) layer_rank=2 layer_name=engine/pattern ;;
    engine/io/*) layer_rank=2 layer_name=engine/io ;;
    engine/rewrite/*) layer_rank=3 layer_name=engine/rewrite ;;
    engine/passes/*) layer_rank=4 layer_name=engine/passes ;;
    engine/exec/*) layer_rank=5 layer_name=engine/exec ;;
    engine/*) layer_rank=6 layer_name=engine ;;
    tools/*) layer_rank=7 layer_name=tools ;;
    bench/*) layer_rank=7 layer_name=bench ;;
    fuzz/*) layer_rank=7 layer_name=fuzz ;;
    tests/*) layer_rank=8 layer_name=tests ;;
    examples/*) layer_rank=-1 layer_name=examples ;;
    server/*) layer_rank=-1 layer_name=server ;;
  esac
}

folders=(core ops importer tokenizer engine tools bench fuzz tests include examples server)
present=()
for f in "${folders[@]}"; do [ -d "$f" ] && present+=("$f"); done
[ ${#present[@]} -gt 0 ] || { echo "check_layers: no source folders under $root" >&2; exit 2; }

violations=0
checked=0
while IFS= read -r hit; do
  file=${hit%%:*}
  rest=${hit#*:}
  line=${rest%%:*}
  inc=${rest#*:}
  inc=${inc#*\"}
  inc=${inc%%\"*}
  layer_of "$file"
  from_rank=$layer_rank from_name=$layer_name
  [ -n "$from_name" ] || continue
  layer_of "$inc"
  to_rank=$layer_rank to_name=$layer_name
  if [ -z "$to_name" ]; then
    # Not a path from the root: a header beside the file ("npy_file.h"), or a third-party one.
    [ -f "${file%/*}/$inc" ] || continue
    to_rank=$from_rank to_name=$from_name
  fi
  checked=$((checked + 1))
  ok=1
  if [ "$to_name" = "$from_name" ]; then
    ok=1
  elif [ "$to_name" = include/attune ]; then
    ok=1
  elif [ "$from_rank" -lt 0 ] || [ "$to_rank" -ge "$from_rank" ]; then
    ok=0
  fi
  if [ $ok = 0 ]; then
    violations=$((violations + 1))
    echo "$file:$line: includes \"$inc\": $from_name may not include $to_name (a layer above it or beside it)"
  elif [ $verbose = 1 ]; then
    echo "$file:$line: \"$inc\" ($from_name -> $to_name)"
  fi
done < <(grep -rnE --include='*.cc' --include='*.h' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "${present[@]}")

if [ $violations -gt 0 ]; then
  echo "check_layers: $violations include(s) from a folder to one above it (see docs/ARCHITECTURE.md)"
  exit 1
fi
echo "check_layers: $checked includes of our own headers, none upward"
