#!/usr/bin/env bash
# Configures and builds Attune into a build folder: build.sh [release|asan|tsan] [make targets...]
# The asan build (AddressSanitizer + UndefinedBehaviorSanitizer, for CI's second suite) leaves out
# what the release run covers and the sanitizers add little to: the benchmarks; the CLI and the
# Python module (so tests/cli and tests/python: the CLI starts once per case, and the hostile model
# and .npy files those tests feed are run at library level by the importer and api suites and by
# the fuzz replays); tests/passes and tests/pattern (the passes and the matcher run under the
# sanitizers in the fusion and model suites). scripts/test.sh says what of the rest it samples.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-release}
shift || true
case "$kind" in
  release) dir="$root/build"; flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan) dir="$root/build-asan"; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DATTUNE_SANITIZE=ON -DATTUNE_BUILD_BENCHMARKS=OFF -DATTUNE_BUILD_PYTHON=OFF -DATTUNE_BUILD_TOOLS=OFF "-DATTUNE_TEST_SKIP_DIRS=passes;pattern") ;;
  tsan) dir="$root/build-tsan"; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DATTUNE_TSAN=ON -DATTUNE_BUILD_BENCHMARKS=OFF -DATTUNE_BUILD_PYTHON=OFF) ;;
  *) echo "usage: build.sh [release|asan|tsan] [targets...]" >&2; exit 2 ;;
esac
# ccache, where it is installed, keeps compiled objects across build folders and clones (paths
# are taken relative to the clone, so a second clone of the same sources reuses them).
if command -v ccache > /dev/null; then
  flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
fi
cmake -S "$root" -B "$dir" "${flags[@]}" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
jobs=$(nproc)
cmake --build "$dir" -j "$jobs" ${1:+--target "$@"}
