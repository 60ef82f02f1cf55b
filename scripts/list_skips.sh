#!/usr/bin/env bash
# Names every test a ctest run in BUILD_DIR skipped, with its reason: list_skips.sh BUILD_DIR
# (gtest cases from the XML each shard writes to test-results/, whole programs from ctest's log).
set -uo pipefail
dir=$1
lines=$(
  for xml in "$dir"/test-results/*.xml; do
    [ -f "$xml" ] || continue
    awk '
      /<testcase / {
        match($0, /name="[^"]*"/); name = substr($0, RSTART + 6, RLENGTH - 7)
        match($0, /classname="[^"]*"/); suite = substr($0, RSTART + 11, RLENGTH - 12)
      }
      /<skipped message="/ {
        msg = $0; sub(/.*<skipped message="/, "", msg); sub(/".*/, "", msg)
        sub(/^[^&]*&#x0A;/, "", msg); gsub(/&#x0A;/, " ", msg); gsub(/&apos;/, "\047", msg); gsub(/&quot;/, "\"", msg)
        gsub(/&lt;/, "<", msg); gsub(/&gt;/, ">", msg); gsub(/&amp;/, "\\&", msg)
        print msg "\t" suite "." name
      }' "$xml"
  done
  log="$dir/Testing/Temporary/LastTest.log"
  [ -f "$log" ] && awk '/^[0-9]+\/[0-9]+ Test: / { test = $3 } /^SKIPPED: / { sub(/^SKIPPED: /, ""); print $0 "\t" test }' "$log"
)
# One paragraph per reason, the skipped tests under it.
if [ -n "$lines" ]; then
  echo "Skipped tests ($(printf '%s\n' "$lines" | wc -l)):"
  printf '%s\n' "$lines" | sort | awk -F'\t' '$1 != last { print "  " $1; last = $1 } { print "    " $2 }'
fi
exit 0
