#!/usr/bin/env bash
# Sets up, builds and runs every test; ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# torch and torch-mlir in the same venv, so that python.pytest also runs
# the PyTorch tests (python/tests/test_torch*.py) instead of skipping them.
bash scripts/setup-torch.sh
bash scripts/build.sh
# The sanitized build first (docs/Reliability.md): its libFuzzer targets,
# 10 s each, then lit, the runtime tests and an end-to-end oracle under
# ASan and UBSan; the main suite's summary is the last thing printed.
bash scripts/sanitize.sh 10
# Tests labelled slow (the 4-stage bench GPT oracle) run with `ctest -L slow`.
# One test per core; the heavy end-to-end ones are RUN_SERIAL and run alone.
ctest --test-dir build --output-on-failure -LE slow -j "$(nproc)"
