#!/usr/bin/env python3
"""pp-opt never crashes: runs every pp pass (and the whole pipeline) on every
split of every .mlir file in the test suite, valid or not, and fails if a
run dies by a signal instead of succeeding or reporting a diagnostic.
Leaves out the whole-compile fuzzer's findings: they crash MLIR's own
linalg parsers, which pp-compile guards and pp-opt reaches unguarded
(docs/Reliability.md)."""

import argparse
import concurrent.futures
import os
import pathlib
import subprocess
import sys

# Inputs that crash MLIR's linalg parsers (the cases pp-compile rejects
# before parsing; pp-opt parses them itself).
UPSTREAM_PARSER_CRASHES = {"malformed-permutation.mlir"}

PASSES = [
    "--pp-split-microbatches=num-microbatches=2",
    "--pp-partition-stages=num-stages=2",
    "--pp-partition-stages",
    "--pp-derive-backward",
    "--pp-schedule=schedule=1f1b num-microbatches=2",
    "--pp-schedule=schedule=gpipe num-stages=2 num-microbatches=2",
    "--pp-insert-transfers",
    "--pp-verify-schedule",
    "--convert-pp-to-runtime",
]
PIPELINE = [
    "--pp-split-microbatches=num-microbatches=2", "--pp-partition-stages=num-stages=2",
    "--pp-derive-backward", "--pp-schedule=schedule=1f1b num-microbatches=2",
    "--pp-insert-transfers", "--pp-verify-schedule",
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-opt", required=True)
    parser.add_argument("--tests", required=True)
    args = parser.parse_args()
    # One pp-opt per file and pass list (--split-input-file): its start-up
    # costs more than the passes; a crashed run is repeated chunk by chunk
    # to name the chunk.
    jobs = [(path, flags)
            for path in sorted(pathlib.Path(args.tests).rglob("*.mlir"))
            if path.parent.name != "pp-compile-fuzzer"
            and path.name not in UPSTREAM_PARSER_CRASHES
            for flags in [[p] for p in PASSES] + [PIPELINE]]

    def pp_opt(text, flags):
        return subprocess.run([args.pp_opt, "-", *flags], input=text,
                              capture_output=True, text=True, timeout=300)

    def crashed(proc):
        return proc.returncode < 0 or proc.returncode > 1

    def run(job):
        path, flags = job
        text = path.read_text()
        proc = pp_opt(text, ["--split-input-file", *flags])
        if not crashed(proc):
            return path, flags, []
        return path, flags, [(i, proc)
                             for i, chunk in enumerate(text.split("// -----"))
                             if crashed(proc := pp_opt(chunk, flags))]

    runs = crashes = 0
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for path, flags, crashed_chunks in pool.map(run, jobs):
            runs += 1
            if crashed_chunks:
                crashes += 1
            for chunk, proc in crashed_chunks:
                print(f"CRASH ({proc.returncode}): {path} chunk {chunk} "
                      f"{' '.join(flags)}")
                print(proc.stderr[-2000:])
    print(f"{runs - crashes} passed, {crashes} failed")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
