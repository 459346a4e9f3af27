#!/usr/bin/env bash
# Sets up and builds pp, exports examples/torch-gpt's PyTorch GPT, lets
# pp's layout planner lay it out on 4 processes within 4 MB each, prints
# the layout, auto's schedule and its timeline (also as
# build/examples/torch-gpt/timeline.svg), and trains it for 20 steps
# beside a plain PyTorch loop, printing both losses and the throughput.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/setup-torch.sh
# What the demo runs: the Python package and the runtime it links programs to.
bash scripts/build.sh pp-python pp-compile
venv=${PP_PYTHON_VENV:-$HOME/.cache/pp-python-venv}
PYTHONPATH=build/python_packages "$venv/bin/python" \
  examples/torch-gpt/train.py --devices 4 --memory-cap 4e6 --schedule auto \
  --steps 20 --out build/examples/torch-gpt
