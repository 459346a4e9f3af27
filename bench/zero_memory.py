#!/usr/bin/env python3
"""ZeRO-1 against plain data parallelism on a GPT: optimizer-state bytes
per rank (the runtime's own --print-memory) against the closed form, and
the step time, for 2 stages x 2 replicas (4 processes) with Adam.

  python3 bench/zero_memory.py --pp-compile build/bin/pp-compile \\
      --model examples/gpt/gpt.mlir --corpus examples/gpt/corpus.txt

Prints one table row per ZeRO stage: per rank weights, gradients and
optimizer bytes, the optimizer bytes per weight, and rank 0's median step
time (--metrics) over the measured steps."""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--microbatches", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        exe = os.path.join(work, "train")
        run([args.pp_compile, args.model, "--stages", "2", "--microbatches",
             str(args.microbatches), "--schedule", "1f1b", "--data-parallel",
             "2", "-o", exe])
        print(f"{os.path.basename(args.model)}, 2 stages x 2 replicas, 1f1b, "
              f"{args.microbatches} micro-batches, Adam, median of "
              f"{args.steps - args.warmup} steps")
        print("| `--zero` | rank | weights (B) | gradients (B) | optimizer (B) "
              "| optimizer B/weight | step (ms) |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for zero in (0, 1):
            metrics = os.path.join(work, f"m{zero}.jsonl")
            out = run(["mpirun", "-np", "4", exe, "--steps", str(args.steps),
                       "--corpus", args.corpus, "--optimizer", "adam",
                       "--lr", "0.01", "--zero", str(zero), "--metrics",
                       metrics, "--print-memory"])
            with open(metrics) as f:
                rows = [json.loads(l) for l in f if l.strip()]
            times = [r["seconds"] for r in rows][args.warmup:]
            step_ms = 1e3 * statistics.median(times)
            mem = sorted((int(r), int(w), int(g), int(o)) for r, w, g, o in
                         re.findall(r"memory rank (\d+): weights (\d+) "
                                    r"gradients (\d+) optimizer (\d+)", out))
            for rank, w, g, o in mem:
                print(f"| {zero} | {rank} | {w} | {g} | {o} | "
                      f"{o / (w / 4):.2f} | {step_ms:.2f} |")


if __name__ == "__main__":
    main()
