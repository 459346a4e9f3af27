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
if [ -x build/bin/pp-translate ]; then
  build/bin/pp-translate --pp-schedule-to-json "$out/schedule.mlir" -o "$out/schedule.json"
  build/bin/pp-translate --pp-schedule-to-chrome-trace "$out/schedule.mlir" -o "$out/trace.json"
  echo "schedule: $out/schedule.json, timeline for Perfetto: $out/trace.json"
fi
sed -n '/pp.schedule/,/^  }$/p' "$out/schedule.mlir" | grep -E "pp.rank|pp.compute" | head -40
build/bin/pp-compile examples/mlp/mlp.mlir --stages 4 --microbatches 8 \
  --schedule 1f1b -o "$out/train"
mpirun -np 4 "$out/train" --steps 20 --lr 0.1
