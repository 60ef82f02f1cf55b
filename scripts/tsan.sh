#!/usr/bin/env bash
# Runs the concurrent-Session tests under ThreadSanitizer (build-tsan/): tsan.sh [extra gtest filter]
# Debian's libgomp is not instrumented, so TSan cannot see the happens-before edges of
# OpenMP barriers inside one call; reports whose stack passes through libgomp are
# suppressed (scripts/tsan.supp). Races between concurrent Run calls on one Session
# (shared caches, shared buffers, the plan) happen outside those frames and still fail.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" tsan test_api
export TSAN_OPTIONS="suppressions=$root/scripts/tsan.supp halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export OMP_WAIT_POLICY=passive
"$root/build-tsan/tests/test_api" --gtest_filter="${1:-*ConcurrencyTest.*:ZeroCopy*}"
