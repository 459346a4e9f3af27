#!/usr/bin/env bash
# Installs every Debian package pp needs to build, test and run (Debian 12),
# and the virtual environment the Python package builds and tests in.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
PKGS=(
  cmake ninja-build ccache g++ git python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools lld-22
  mpich libmpich-dev libopenblas-dev libomp-22-dev
  clang-format python3
  clang-22 libclang-rt-22-dev libgtest-dev
  python3-dev python3-pip python3-venv
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

# The pp Python package (python/, docs/Python.md) builds against nanobind,
# reads and writes weight files with safetensors and is tested with pytest
# and matplotlib from PyPI, in a venv outside the repository (Debian's pip
# does not install into the system Python).
VENV=${PP_PYTHON_VENV:-$HOME/.cache/pp-python-venv}
[ -x "$VENV/bin/python" ] || /usr/bin/python3 -m venv "$VENV"
"$VENV/bin/python" -c 'import nanobind, pytest, matplotlib, safetensors' 2>/dev/null ||
  "$VENV/bin/python" -m pip --disable-pip-version-check -q install \
    nanobind pytest matplotlib safetensors
