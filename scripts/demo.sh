#!/usr/bin/env bash
# Sets up, builds, compiles the MLP example for 4 stages and trains it on 4
# MPI ranks, printing the schedule timeline and the per-step losses.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
out=build/examples/mlp
mkdir -p "$out"
build/bin/pp-compile examples/mlp/mlp.mlir --stages 4 --microbatches 8 \
  --schedule 1f1b --emit=schedule -o "$out/schedule.mlir"
build/bin/pp-translate --pp-schedule-to-json "$out/schedule.mlir" -o "$out/schedule.json"
build/bin/pp-translate --pp-schedule-to-chrome-trace "$out/schedule.mlir" -o "$out/trace.json"
echo "== 1f1b schedule, 4 stages x 8 micro-batches (unit costs; BW = fused backward)"
build/bin/pp-translate --pp-schedule-to-ascii "$out/schedule.mlir"
echo "(exported: $out/schedule.json, Perfetto timeline: $out/trace.json)"
echo "== training on 4 MPI ranks"
build/bin/pp-compile examples/mlp/mlp.mlir --stages 4 --microbatches 8 \
  --schedule 1f1b -o "$out/train"
mpirun -np 4 "$out/train" --steps 20 --lr 0.1
