#!/usr/bin/env bash
# Installs every Debian package pp needs to build, test and run (Debian 12).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
PKGS=(
  cmake ninja-build ccache g++ git python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools lld-22
  mpich libmpich-dev libopenblas-dev
  clang-format python3
  clang-22 libclang-rt-22-dev
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
