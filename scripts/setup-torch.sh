#!/usr/bin/env bash
# Installs PyTorch (CPU use) and torch-mlir from PyPI into a venv: what
# pp.torch (docs/PyTorch.md), its tests and bench/compute_speed.py need.
#
# PyPI's torch wheel depends on the whole CUDA stack (about 3 GB); we
# install it with --no-deps plus its small pure-Python dependencies and the
# few NVIDIA libraries its import needs that the system CUDA does not
# provide, at the versions torch pins.
#
# PP_MKL=1 also installs Intel's MKL from PyPI (libmkl_rt.so.3 in the
# venv's lib/), the BLAS pp's CPU GEMMs run fastest on where the CPU is an
# Intel one (docs/StageCode.md, "Which BLAS"); the script prints the
# PPRT_BLAS setting that selects it.
set -euo pipefail
VENV=${PP_TORCH_VENV:-$HOME/.cache/pp-python-venv}
[ -x "$VENV/bin/python" ] || /usr/bin/python3 -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q install)
if ! "$VENV/bin/python" -c 'import torch, torch_mlir, numpy' 2>/dev/null; then
  "${PIP[@]}" --no-deps torch==2.15.0 nvidia-cufile nvidia-cusparselt-cu13==0.8.1 \
    nvidia-nccl-cu13==2.30.7 nvidia-nvshmem-cu13==3.7.2
  "${PIP[@]}" filelock 'typing-extensions>=4.13' 'sympy>=1.13.3' mpmath \
    networkx jinja2 MarkupSafe fsspec numpy torch-mlir==20261001
fi
"$VENV/bin/python" -c 'import torch, torch_mlir, numpy; print("torch", torch.__version__, "numpy", numpy.__version__)'
if [ "${PP_MKL:-0}" = 1 ]; then
  [ -e "$VENV/lib/libmkl_rt.so.3" ] || "${PIP[@]}" mkl==2026.2.1
  echo "MKL: export PPRT_BLAS=$VENV/lib/libmkl_rt.so.3"
fi
