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
# implements. It includes nothing of ours but itself, and examples/ (code as
# an embedder writes it) include nothing of ours but it.
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

# Layer of a path (a source file or an include), longest prefix first:
# prints "<rank> <name>", or nothing when the path is not ours.
layer_of() {
  case "$1" in
    attune/*|include/attune/*) echo "-1 include/attune" ;;
    core/*) echo "0 core" ;;
    ops/*) echo "1 ops" ;;
    importer/*) echo "1 importer" ;;
    tokenizer/*) echo "1 tokenizer" ;;
    engine/pattern/*) echo "2 engine/pattern" ;;
    engine/io/*) echo "2 engine/io" ;;
    engine/rewrite/*) echo "3 engine/rewrite" ;;
    engine/passes/*) echo "4 engine/passes" ;;
    engine/exec/*) echo "5 engine/exec" ;;
    engine/*) echo "6 engine" ;;
    tools/*) echo "7 tools" ;;
    bench/*) echo "7 bench" ;;
    fuzz/*) echo "7 fuzz" ;;
    tests/*) echo "8 tests" ;;
    examples/*) echo "-1 examples" ;;
  esac
}

folders=(core ops importer tokenizer engine tools bench fuzz tests include examples)
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
  read -r from_rank from_name <<<"$(layer_of "$file")"
  [ -n "${from_name:-}" ] || continue
  read -r to_rank to_name <<<"$(layer_of "$inc")"
  if [ -z "${to_name:-}" ]; then
    # Not a path from the root: a header beside the file ("npy_file.h"), or a third-party one.
    [ -f "$(dirname "$file")/$inc" ] || continue
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
