#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: test.sh [release|asan|tsan]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-release}
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$kind"
case "$kind" in
  release) dir="$root/build" ;;
  *) dir="$root/build-$kind" ;;
esac
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$dir"
rm -rf test-results
status=0
ctest --output-on-failure -j "$(nproc)" --timeout 900 || status=$?
bash "$root/scripts/list_skips.sh" "$dir"
exit $status
