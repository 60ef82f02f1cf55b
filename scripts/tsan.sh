#!/usr/bin/env bash
# Runs the concurrent-Session tests under ThreadSanitizer (build-tsan/): tsan.sh [gtest filter]
# First the runs with threads = 1 (no OpenMP team inside a call) with no suppressions at all:
# any race between concurrent Run calls on one Session fails them. Then every test, with the
# reports that pass through libgomp suppressed (scripts/tsan.supp): Debian's libgomp is not
# instrumented, so TSan cannot see the ordering its barriers give the threads of one team.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" tsan test_api
export OMP_WAIT_POLICY=passive
TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
  "$root/build-tsan/tests/test_api" --gtest_filter="*ConcurrencyTest.*threads1"
TSAN_OPTIONS="suppressions=$root/scripts/tsan.supp halt_on_error=1 ${TSAN_OPTIONS:-}" \
  "$root/build-tsan/tests/test_api" --gtest_filter="${1:-*ConcurrencyTest.*:ZeroCopy*}"
# The pooled-intermediates test with the buffer pool kept on (it is off in sanitizer builds by
# default): TSan then sees every buffer that passes from one run to another through the pool.
ATTUNE_BUFFER_POOL=1 TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
  "$root/build-tsan/tests/test_api" --gtest_filter="PooledConcurrencyTest.*"
