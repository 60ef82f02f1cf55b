#!/bin/bash
# Installs the Debian packages the model generators need (idempotent; run as root).
# PyTorch 1.13 (with torchvision 0.14), ONNX 1.12 and NumPy from Debian 12, used through /usr/bin/python3.
set -euo pipefail
pkgs=(python3-torch python3-torchvision python3-onnx python3-numpy)
missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup.sh: ${pkgs[*]} already installed" >&2
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: need root to install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
