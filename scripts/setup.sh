#!/usr/bin/env bash
# Installs the Debian 12 packages Attune builds with; does nothing when they are present.
set -euo pipefail
packages=(build-essential cmake g++ pkg-config libonnx-dev libprotobuf-dev protobuf-compiler libdnnl-dev libabsl-dev
          googletest libgtest-dev libbenchmark-dev nlohmann-json3-dev graphviz)
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
