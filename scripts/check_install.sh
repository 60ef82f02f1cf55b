#!/usr/bin/env bash
# Installs Attune into a temporary prefix and builds the examples against that
# prefix as separate CMake projects, the way an embedder would:
#   check_install.sh [BUILD_DIR]
# BUILD_DIR: an already configured build folder to reuse (e.g. build/); without
# it, a release build of the library alone is made in build-install/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-}
if [ -z "$build" ]; then
  build="$root/build-install"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DATTUNE_BUILD_TESTS=OFF -DATTUNE_BUILD_BENCHMARKS=OFF \
    > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
fi
build=$(cd "$build" && pwd)
# The Python module is installed with the library when the build has it (ATTUNE_BUILD_PYTHON).
targets=(attune)
python_module=0
if grep -q '^ATTUNE_BUILD_PYTHON:BOOL=ON' "$build/CMakeCache.txt"; then
  targets+=(attune_python)
  python_module=1
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

work=$(mktemp -d "${TMPDIR:-/tmp}/attune-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
fail() { echo "check_install: FAIL: $*" >&2; exit 1; }

echo "== install into $prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log" || { cat "$work/install.log"; exit 1; }
lib=$(find "$prefix" -name 'libattune.so.*.*.*' -type f | head -1)
[ -n "$lib" ] || fail "no libattune.so.X.Y.Z installed"
libdir=$(dirname "$lib")
[ "$(readlink "$libdir/libattune.so")" = "libattune.so.0" ] || fail "libattune.so does not point to libattune.so.0"
[ "$(readlink "$libdir/libattune.so.0")" = "$(basename "$lib")" ] || fail "libattune.so.0 does not point to $(basename "$lib")"
for f in cmake/attune/attuneConfig.cmake cmake/attune/attuneConfigVersion.cmake cmake/attune/attuneTargets.cmake \
         pkgconfig/attune.pc; do
  [ -f "$libdir/$f" ] || fail "$libdir/$f missing"
done
bash "$root/scripts/check_exports.sh" "$lib"

echo "== public headers: self-contained, no internal includes"
headers=$(cd "$prefix/include" && find . -type f | sed 's|^\./||' | sort)
echo "$headers" | tr '\n' ' '; echo
for h in $headers; do
  [[ "$h" == attune/*.h ]] || fail "unexpected installed file include/$h"
  bad=$(grep -E '^\s*#\s*include' "$prefix/include/$h" | grep -vE '#\s*include\s*(<[a-z_]+>|"attune/[a-z_]+\.h"|"absl/[a-z_/]+\.h")' || true)
  [ -z "$bad" ] || fail "include/$h includes a private header: $bad"
  echo "#include \"$h\"" | c++ -std=c++20 -fsyntax-only -I"$prefix/include" -x c++ - || fail "include/$h does not compile alone"
done

echo "== examples as separate CMake projects"
for ex in hello server generate; do
  cmake -S "$root/examples/$ex" -B "$work/$ex" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    > "$work/$ex.configure.log" 2>&1 || { cat "$work/$ex.configure.log"; fail "configuring examples/$ex"; }
  cmake --build "$work/$ex" -j "$(nproc)" > "$work/$ex.build.log" 2>&1 || { cat "$work/$ex.build.log"; fail "building examples/$ex"; }
  # The consumer's compile line carries no trace of the private dependencies.
  if grep -Ei 'onnx|protobuf|dnnl|fopenmp|'"$root" "$work/$ex/CMakeFiles/$ex.dir/flags.make"; then
    fail "examples/$ex compiles with private or source-tree flags"
  fi
done

echo "== hello"
out=$("$work/hello/hello" "$root/models/mha_causal/model.onnx")
echo "$out"
[ "$out" = "y: float32[2, 2, 64]" ] || fail "unexpected hello output"

echo "== generate"
out=$("$work/generate/generate" "$root/models/gpt_kvcache/model.onnx" 47 68 25)
echo "$out" | grep '^tokens:'
echo "$out" | grep -q '^tokens: 51 88 54 41 94 3 43 62 47 14 40 77 86 83 59 89$' || fail "unexpected generate output"

if [ "$python_module" = 1 ]; then
  echo "== the Python module from the prefix alone"
  site="$prefix/lib/python3/dist-packages"
  out=$(cd "$work" && PYTHONPATH="$site" /usr/bin/python3 -c \
    "import attune; s = attune.InferenceSession('$root/models/mha_causal/model.onnx'); print(s.get_inputs()[0].shape)") \
    || fail "import attune from $site"
  [ "$out" = "['batch', 'seq', 64]" ] || fail "unexpected Python output: $out"
fi

echo "== hello through pkg-config"
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs attune) || fail "pkg-config attune"
c++ -std=c++20 "$root/examples/hello/main.cc" -o "$work/hello-pc" $flags -Wl,-rpath,"$libdir"
[ "$("$work/hello-pc" "$root/models/mha_causal/model.onnx")" = "y: float32[2, 2, 64]" ] || fail "pkg-config hello"

echo "== server: 12 requests, 4 workers"
mkdir -p "$work/requests"
for i in $(seq -w 0 10); do cp "$root/models/mha_causal/inputs/x.npy" "$work/requests/r$i.npy"; done
mkdir -p "$work/requests/r11" && cp "$root/models/mha_causal/inputs/x.npy" "$work/requests/r11/x.npy"
"$work/server/server" "$root/models/mha_causal/model.onnx" "$work/requests" "$work/responses" 4 | tail -1
for i in $(seq -w 0 11); do
  cmp -s "$work/responses/r00/y.npy" "$work/responses/r$i/y.npy" || fail "response r$i differs from r00"
done
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  /usr/bin/python3 - "$work/responses/r00/y.npy" "$root/models/mha_causal/outputs/y.npy" <<'PY' || fail "server output differs from PyTorch"
import sys, numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype)
err = float(np.max(np.abs(got - want)))
print(f"server output vs PyTorch: max abs error {err:.2e}")
assert err < 1e-4
PY
fi
echo "check_install: OK"
