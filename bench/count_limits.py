#!/usr/bin/env python3
"""Times pp at the count limits of docs/Reliability.md: each largest
schedule generated, given transfers, simulated and printed (pp-opt
--pp-schedule --pp-insert-transfers --pp-simulate), and the largest
declared micro-batch count simulated. One row each with wall time, CPU time
(user + system, which a loaded machine does not inflate) and peak memory.

Standard library only. Example:
  python3 bench/count_limits.py --pp-opt build/bin/pp-opt
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
PIPELINE = "--pp-insert-transfers --pp-simulate"
# (what, pp-opt options after the input): the limits of Limits.h.
ROWS = [
    ("4,096 stages, 1 micro-batch",
     "--pp-schedule=num-stages=4096 schedule=1f1b"),
    ("16,384 stages, 1 micro-batch",
     "--pp-schedule=num-stages=16384 schedule=1f1b"),
    ("65,536 stages and ranks, 1 micro-batch",
     "--pp-schedule=num-stages=65536 schedule=1f1b"),
    ("65,536 stages and ranks, 4 micro-batches (2^18 stage micro-batches)",
     "--pp-schedule=num-stages=65536 num-microbatches=4 schedule=1f1b"),
    ("65,536 stages on 2 ranks, 2 micro-batches",
     "--pp-schedule=num-stages=65536 num-ranks=2 num-microbatches=2 "
     "schedule=interleaved-1f1b"),
    ("2 stages, 131,072 micro-batches (2^18 stage micro-batches)",
     "--pp-schedule=num-stages=2 num-microbatches=131072 schedule=1f1b"),
    ("1 stage, 262,144 micro-batches (2^18)",
     "--pp-schedule=num-stages=1 num-microbatches=262144 schedule=1f1b"),
]
SPARSE = ("a parsed schedule declaring 2^20 micro-batches, simulated",
          REPO / "test/Dialect/PP/Transforms/Schedule/"
          "verify-schedule-sparse.mlir", "--pp-simulate")


def measure(command):
    """Runs `command`; returns (wall s, CPU s, peak RSS MB, exit status)."""
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    return (wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
            os.waitstatus_to_exitcode(status))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pp-opt", required=True)
    args = parser.parse_args()
    print("| count | wall (s) | CPU (s) | peak memory (MB) |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        empty = pathlib.Path(tmp) / "empty.mlir"
        empty.write_text("module {}\n")
        output = os.path.join(tmp, "out.mlir")
        rows = [(what, [args.pp_opt, str(empty), options] +
                 PIPELINE.split() + ["-o", output])
                for what, options in ROWS]
        what, path, options = SPARSE
        rows.append((what, [args.pp_opt, str(path), options, "-o", output]))
        for what, command in rows:
            wall, cpu, rss, status = measure(command)
            if status != 0:
                sys.exit(f"{what}: pp-opt exited with {status}")
            print(f"| {what} | {wall:.1f} | {cpu:.1f} | {rss:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
