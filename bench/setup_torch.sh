#!/usr/bin/env bash
# Creates the virtual environment bench/compute_speed.py runs in: numpy and
# a CPU-usable PyTorch from PyPI, outside the repository.
#
# PyPI's torch wheel depends on the whole CUDA stack; we install it with
# --no-deps plus its small pure-Python dependencies and the few NVIDIA
# libraries its import needs that the system CUDA does not provide.
set -euo pipefail
VENV=${PP_BENCH_VENV:-$HOME/.cache/pp-bench-venv}
PY=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
PIP="$VENV/bin/python -m pip --disable-pip-version-check -q"
$PIP install numpy filelock typing-extensions sympy mpmath networkx jinja2 \
  MarkupSafe fsspec
if ! "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
  $PIP install --no-deps torch
  $PIP install --no-deps nvidia-cufile nvidia-cusparselt-cu13 \
    nvidia-nvshmem-cu13 nvidia-nccl-cu13
fi
"$VENV/bin/python" -c 'import torch, numpy; print("torch", torch.__version__, "numpy", numpy.__version__)'
echo "$VENV/bin/python"
