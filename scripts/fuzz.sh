#!/usr/bin/env bash
# Builds fuzz/ with clang 14 (libFuzzer, AddressSanitizer, UndefinedBehaviorSanitizer)
# into build-fuzz/ and runs each target for SECONDS (default 60):
#
#   fuzz.sh [SECONDS] [TARGET...]     targets: model_import model_differential npy tensor_proto
#
# Each target starts from the committed corpus fuzz/corpus/<target>/ plus seeds
# from models/ (and ONNX's backend test data when installed); new inputs
# collect in build-fuzz/corpus/<target>/. One worker, so a shared machine stays
# usable (run it under nice). A run continues past findings: each crash, leak,
# timeout or out-of-memory input is saved in fuzz/crashes/<target>/, which the
# CI replays (ctest -L fuzz) once it is fixed. At the end the inputs that add
# coverage are merged into fuzz/corpus/<target>/, keeping only files of at most
# ATTUNE_FUZZ_KEEP_BYTES (default 4096), and for the slow targets at most a
# number of files (their names are hashes, so the first by name are a random
# sample), so the committed corpus stays small and its CI replay takes seconds;
# the whole corpus stays in build-fuzz/corpus/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(model_import model_differential npy tensor_proto)
keep_bytes=${ATTUNE_FUZZ_KEEP_BYTES:-4096}
dir="$root/build-fuzz"
testdata=/usr/share/libonnx-testdata/data/node

command -v clang++-14 > /dev/null || { echo "fuzz: clang++-14 is missing (scripts/setup.sh installs it)" >&2; exit 2; }
cmake -S "$root" -B "$dir" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DATTUNE_FUZZ=ON -DATTUNE_BUILD_TESTS=OFF \
  -DATTUNE_BUILD_BENCHMARKS=OFF -DATTUNE_BUILD_TOOLS=OFF -DATTUNE_BUILD_PYTHON=OFF \
  > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" -j "${ATTUNE_FUZZ_JOBS:-$(nproc)}" --target "${targets[@]/#/fuzz_}"

# Seed folders per target: files copied once into build-fuzz/seeds/<target>/.
seed() {
  local target=$1 seeds="$dir/seeds/$1"
  [ -d "$seeds" ] && return
  mkdir -p "$seeds"
  case "$target" in
    model_import)
      find "$root/models" -name '*.onnx' -size -100k -exec cp --backup=numbered -t "$seeds" {} +
      [ -d "$testdata" ] && find "$testdata" -name model.onnx -size -8k | while read -r f; do
        cp "$f" "$seeds/$(basename "$(dirname "$f")").onnx"; done ;;
    model_differential)
      # One input per base model: its index and no edit.
      for i in $(seq 0 15); do printf "\\x$(printf %02x "$i")" > "$seeds/model_$i"; done ;;
    npy)
      find "$root/models" -name '*.npy' -size -64k | while read -r f; do
        cp "$f" "$seeds/$(echo "${f#$root/models/}" | tr / _)"; done ;;
    tensor_proto)
      [ -d "$testdata" ] && find "$testdata" -name '*.pb' -size -8k | while read -r f; do
        cp "$f" "$seeds/$(echo "${f#$testdata/}" | tr / _)"; done ;;
  esac
}

declare -A keep_files=([model_import]=400 [model_differential]=30 [npy]=1000 [tensor_proto]=1000)
declare -A max_len=([model_import]=100000 [model_differential]=256 [npy]=4096 [tensor_proto]=4096)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for target in "${targets[@]}"; do
  exe="$dir/fuzz_$target"
  work="$dir/corpus/$target"
  corpus="$root/fuzz/corpus/$target"
  crashes="$root/fuzz/crashes/$target"
  mkdir -p "$work" "$corpus" "$crashes" "$dir/logs"
  seed "$target"
  dict=()
  case "$target" in model_import|tensor_proto) dict=(-dict="$root/fuzz/onnx.dict") ;; esac
  echo "fuzz: $target for ${seconds}s (log: $dir/logs/$target.log)"
  # -fork=1 runs the inputs in a child and carries on past crashes, timeouts and OOMs.
  "$exe" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds" \
    -timeout=25 -rss_limit_mb=3072 -max_len="${max_len[$target]}" -artifact_prefix="$crashes/" \
    "${dict[@]}" "$work" "$corpus" "$dir/seeds/$target" > "$dir/logs/$target.log" 2>&1 || true
  grep -E '^#[0-9]+' "$dir/logs/$target.log" | tail -1 || true
  # Keep what adds coverage, small files only.
  merged="$dir/merge/$target"
  rm -rf "$merged"
  mkdir -p "$merged"
  find "$corpus" -type f -size -"$((keep_bytes + 1))"c -exec cp -t "$merged" {} +
  "$exe" -merge=1 -max_len="${max_len[$target]}" "$merged" "$work" "$dir/seeds/$target" \
    > "$dir/logs/$target.merge.log" 2>&1 || true
  find "$merged" -type f -size +"$keep_bytes"c -delete
  find "$merged" -type f -printf '%f\n' | sort | tail -n +"$((keep_files[$target] + 1))" | \
    while read -r f; do rm -f "$merged/$f"; done
  rm -rf "$corpus"
  mv "$merged" "$corpus"
  echo "fuzz: $target corpus $(find "$corpus" -type f | wc -l) files, $(du -sh "$corpus" | cut -f1)," \
       "findings so far $(find "$crashes" -type f ! -name '.*' | wc -l)"
done
