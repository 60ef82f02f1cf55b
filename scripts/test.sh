#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: test.sh [release|asan|tsan]
# Prints the wall time of each step (set-up, build, ctest) and the slowest tests at the end.
#
# The sanitizer run (asan) does not repeat everything the release run checked (CI runs both, on
# two cores, within 40 minutes; docs/reliability.md, "Sanitizers and CI"):
#  - whole: the kernels and ops (ops, attention_kernels), the importer and validator, core, engine,
#    api (threads, zero copy), the fuzz corpus replays and the conformance runner on the fused
#    graphs: that is where hostile input and out-of-bounds reads live;
#  - sampled: the long model suites (models, fusion, generate) run their first gtest shard of
#    ATTUNE_TEST_SHARDS (4): a spread of their cases, as gtest deals the cases out in turn, since
#    they run the same kernels on model after model;
#  - left out: conformance.unfused (the backend node tests are single ops, which fusion leaves as
#    they are, so the unfused run repeats the fused one); tests/cli, passes and pattern are not built
#    there (scripts/build.sh says why).
# ATTUNE_ASAN_FULL=1 runs every test of the sanitizer build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-release}
start=$SECONDS
"$root/scripts/setup.sh"
setup_s=$((SECONDS - start))
"$root/scripts/build.sh" "$kind"
build_s=$((SECONDS - start - setup_s))
case "$kind" in
  release) dir="$root/build" ;;
  *) dir="$root/build-$kind" ;;
esac
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$dir"
exclude=()
if [ "$kind" = asan ] && [ "${ATTUNE_ASAN_FULL:-0}" != 1 ]; then
  # One shard in four of each sampled suite: those whose number is sample mod 4. The sample
  # follows the commit, so a commit always runs the same cases and four commits in a row cover
  # them all; ATTUNE_ASAN_SAMPLE=1..4 picks one.
  sample=${ATTUNE_ASAN_SAMPLE:-$(( 16#$(git -C "$root" rev-parse --short=4 HEAD 2>/dev/null || echo 0) % 4 + 1 ))}
  skipped=$(ctest -N 2>/dev/null | sed -nE 's/^ *Test +#[0-9]+: ([a-z_]+)\.([0-9]+)$/\1 \2/p' |
    awk -v keep=$((sample % 4)) '$1 ~ /^(models|fusion|generate)$/ && $2 % 4 != keep { printf "|%s\\.%s", $1, $2 }')
  exclude=(-E "^(conformance\\.unfused${skipped})\$")
  echo "Sanitizer run: the sampled suites (models, fusion, generate) run sample $sample of 4" \
    "(ATTUNE_ASAN_SAMPLE=$sample to repeat it, ATTUNE_ASAN_FULL=1 for all)"
fi
rm -rf test-results
status=0
ctest --output-on-failure -j "$(nproc)" --timeout 900 "${exclude[@]}" 2>&1 | tee "$dir/ctest.log" || status=$?
ctest_s=$((SECONDS - start - setup_s - build_s))
bash "$root/scripts/list_skips.sh" "$dir"
echo
echo "Slowest tests (wall, with $(nproc) at a time):"
grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$dir/ctest.log" |
  sed -E 's/^.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/' | sort -rn | head -12 |
  awk '{ printf "  %8.1f s  %s\n", $1, $2 }'
echo "Times ($kind): set-up ${setup_s} s, build ${build_s} s, ctest ${ctest_s} s, total $((SECONDS - start)) s"
exit $status
