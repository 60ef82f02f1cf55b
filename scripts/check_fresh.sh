#!/usr/bin/env bash
# Proves the README's quick start on a new machine: makes a minimal Debian 12 root with mmdebstrap
# (the host's apt sources and Acquire settings, nothing else installed), clones this repository into
# it, and runs the two quick-start commands there as root, printing each command's time and result.
#
#   check_fresh.sh [--with-shared | --without-shared | --both] [--keep] [--work DIR]
#
#   --without-shared  the clone alone, as a user has it (the backend-data tests fall back to Debian's
#                     libonnx-testdata)
#   --with-shared     ../shared copied in beside the clone
#   --both            one fresh root each way (the default)
#   --keep            leave the roots in place (they are removed otherwise)
#   --work DIR        where the roots are made (default /var/tmp/attune-fresh)
#
# Run as root; it clones HEAD (commit first). Slow (a full build per root): not part of CI.
# Exit status: 0 when every command passed in every root, 1 otherwise, 2 for bad usage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
modes=(without with)
keep=0
work=/var/tmp/attune-fresh
while [ $# -gt 0 ]; do
  case "$1" in
    --with-shared) modes=(with) ;;
    --without-shared) modes=(without) ;;
    --both) modes=(without with) ;;
    --keep) keep=1 ;;
    --work) work=$2; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check_fresh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" -eq 0 ] || { echo "check_fresh: run as root (mmdebstrap and chroot)" >&2; exit 2; }
shared=$(cd "$root/.." && pwd)/shared
if [[ " ${modes[*]} " == *" with "* ]] && [ ! -d "$shared" ]; then
  echo "check_fresh: --with-shared needs $shared" >&2
  exit 2
fi
command -v mmdebstrap >/dev/null || {
  echo "check_fresh: installing mmdebstrap on the host"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap
}

# The host's sources (one-line or deb822 files) and its Acquire settings (proxies, validity checks).
sources=()
[ -s /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list && sources+=(/etc/apt/sources.list)
for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] && grep -qs 'debian' "$f" && sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || { echo "check_fresh: no Debian apt sources on the host" >&2; exit 2; }
aptopts=()
for f in /etc/apt/apt.conf.d/*; do
  [ -f "$f" ] && grep -qs '^Acquire' "$f" && aptopts+=(--aptopt="$f")
done

mkdir -p "$work"
base="$work/base"
summary="$work/summary.txt"
: > "$summary"
report() { echo "$*" | tee -a "$summary"; }

if [ ! -x "$base/usr/bin/apt-get" ]; then
  rm -rf "$base"
  start=$(date +%s)
  # --variant=apt: the essential packages and apt, nothing else (no compiler, no git, no python).
  mmdebstrap --variant=apt "${aptopts[@]}" bookworm "$base" "${sources[@]}" > "$work/mmdebstrap.log" 2>&1 ||
    { tail -20 "$work/mmdebstrap.log"; echo "check_fresh: mmdebstrap failed" >&2; exit 1; }
  report "base root: Debian $(cat "$base/etc/debian_version"), $(chroot "$base" dpkg-query -W | wc -l) packages, $(( $(date +%s) - start )) s"
fi

mounted=()
cleanup() {
  for ((i=${#mounted[@]}-1; i>=0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  mounted=()
}
trap cleanup EXIT

# Runs one quick-start command in the root and reports its time and result.
run_in_root() {
  local dir=$1 label=$2 cmd=$3 log=$4
  local start rc
  start=$(date +%s)
  set +e
  chroot "$dir" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 bash -c "cd /root/attune && $cmd" > "$log" 2>&1
  rc=$?
  set -e
  local took=$(( $(date +%s) - start ))
  local verdict=PASS
  [ $rc -eq 0 ] || verdict="FAIL (exit $rc)"
  report "  $label: $cmd  ->  $verdict in $((took / 60)) min $((took % 60)) s  (log $log)"
  if grep -q "tests passed" "$log"; then
    # The suite's verdict, its failures, and each reason for a skip (the names are in the log).
    grep -E "tests passed|^[[:space:]]+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess)" "$log" | sed 's/^/      | /' | tee -a "$summary"
    grep -E "^Skipped tests|^  [^ ]" "$log" | sed 's/^/      | /' | tee -a "$summary"
  else
    tail -n 4 "$log" | sed 's/^/      | /' | tee -a "$summary"
  fi
  return $rc
}

overall=0
for mode in "${modes[@]}"; do
  dir="$work/root-$mode-shared"
  rm -rf "$dir"
  cp -a "$base" "$dir"
  cp /etc/resolv.conf "$dir/etc/resolv.conf"
  git clone -q --no-local "$root" "$dir/root/attune"
  [ "$mode" = with ] && cp -a "$shared" "$dir/root/shared"
  for m in proc sys dev dev/pts; do
    mkdir -p "$dir/$m"
    mount --bind "/$m" "$dir/$m"
    mounted+=("$dir/$m")
  done
  report "root $mode ../shared: $dir (clone of $(git -C "$root" rev-parse --short HEAD))"
  run_in_root "$dir" demo "bash scripts/demo.sh" "$work/$mode-shared-demo.log" || overall=1
  run_in_root "$dir" test "bash scripts/test.sh" "$work/$mode-shared-test.log" || overall=1
  cleanup
  [ $keep -eq 1 ] || rm -rf "$dir"
done
[ $keep -eq 1 ] || rm -rf "$base"
report "check_fresh: $([ $overall -eq 0 ] && echo "all quick-start commands passed" || echo "FAILED")"
exit $overall
