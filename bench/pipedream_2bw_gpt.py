#!/usr/bin/env python3
"""Loss curves of the small GPT (examples/gpt/gpt.mlir) under pipedream-2bw
(two weight versions, the update delayed one step) and synchronous 1f1b,
both on 4 stages with 8 micro-batches, SGD on the example corpus. Prints
a markdown table of the per-step losses every --every steps and the mean
over the last 10 steps.

Usage: bench/pipedream_2bw_gpt.py --pp-compile build/bin/pp-compile
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0:
        sys.exit(f"FAILED ({proc.returncode}): {' '.join(cmd)}\n"
                 f"{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def losses(args, workdir, schedule):
    exe = os.path.join(workdir, schedule)
    run([args.pp_compile, os.path.join(ROOT, "examples/gpt/gpt.mlir"),
         "--stages", "4", "--microbatches", "8", "--schedule", schedule,
         "-o", exe])
    out = run(["mpirun", "-np", "4", exe, "--steps", str(args.steps), "--lr",
               str(args.lr), "--corpus",
               os.path.join(ROOT, "examples/gpt/corpus.txt"), "--timeout",
               "600"])
    return [float(v) for v in re.findall(r"^step \d+ loss (\S+)$", out, re.M)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        sync = losses(args, workdir, "1f1b")
        stale = losses(args, workdir, "pipedream-2bw")
    print(f"GPT (examples/gpt/gpt.mlir), 4 stages, 8 micro-batches, SGD lr "
          f"{args.lr}, {args.steps} steps")
    print("| step | 1f1b (synchronous) | pipedream-2bw |")
    print("|-----:|-------------------:|--------------:|")
    steps = sorted({1, 2, 3} | set(range(args.every, args.steps + 1,
                                         args.every)))
    for step in steps:
        print(f"| {step} | {sync[step - 1]:.6f} | {stale[step - 1]:.6f} |")
    tail = min(10, args.steps)
    print(f"| mean of the last {tail} | {sum(sync[-tail:]) / tail:.6f} | "
          f"{sum(stale[-tail:]) / tail:.6f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
