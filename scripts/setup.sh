#!/usr/bin/env bash
# Installs the Debian 12 packages Attune builds and tests with; does nothing when they are present.
# Every package the build's find_package calls and the tests need is named here: nothing is left to
# a recommendation (apt runs with --no-install-recommends), so a minimal Debian root gets all of them.
set -euo pipefail
packages=(
  build-essential cmake g++ pkg-config      # compiler, CMake, pkg-config (the install check)
  libprotobuf-dev protobuf-compiler         # find_package(Protobuf)
  libonnx-dev                               # find_package(ONNX): onnx_proto
  libdnnl-dev ocl-icd-opencl-dev            # find_package(dnnl); Debian's dnnl-config.cmake also requires OpenCL
  libabsl-dev                               # find_package(absl)
  googletest libgtest-dev                   # find_package(GTest)
  libbenchmark-dev                          # find_package(benchmark), bench/
  nlohmann-json3-dev                        # find_package(nlohmann_json)
  libcpp-httplib-dev                        # pkg-config cpp-httplib: attune serve's HTTP server, server/
  libgrpc++-dev protobuf-compiler-grpc      # pkg-config grpc++, grpc_cpp_plugin: attune serve's gRPC service
  python3-grpcio python3-protobuf           # the gRPC client of the server tests, tests/server/
  libpcre2-dev libutf8proc-dev              # tokenizer/: regexes, Unicode normalization
  graphviz                                  # dot: the CLI tests render `inspect --format dot`
  libonnx-testdata                          # ONNX 1.12 backend node tests, used when ../shared is absent
  python3-dev pybind11-dev                  # find_package(pybind11): the Python module, python/
  python3-numpy python3-pytest              # the module's arrays and its pytest suite, tests/python/
  clang-14 libclang-rt-14-dev libomp-14-dev # for scripts/fuzz.sh: clang++-14, libFuzzer + sanitizer runtimes, OpenMP
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
