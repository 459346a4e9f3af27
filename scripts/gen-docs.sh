#!/usr/bin/env bash
# Regenerates the op and pass reference in docs/reference/ from TableGen.
# With --check, fails if the committed reference is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
ninja -C "$build" mlir-doc >/dev/null
out=docs/reference
files=(Dialects/PPDialect.md Dialects/PPOps.md PPImportPasses.md
  PPDifferentiatePasses.md PPSchedulePasses.md PPStageCodePasses.md
  PPParallelizePasses.md PPConversionPasses.md)
if [ "${1:-}" = "--check" ]; then
  for f in "${files[@]}"; do
    if ! cmp -s "$build/docs/$f" "$out/$(basename "$f")"; then
      echo "docs/reference/$(basename "$f") is out of date: run scripts/gen-docs.sh"
      exit 1
    fi
  done
  echo "docs/reference is up to date"
  exit 0
fi
mkdir -p "$out"
for f in "${files[@]}"; do cp "$build/docs/$f" "$out/"; done
