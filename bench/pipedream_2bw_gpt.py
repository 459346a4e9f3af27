#!/usr/bin/env python3
"""Loss curves of the small GPT (examples/gpt/gpt.mlir) under pipedream-2bw
(two weight versions, the update delayed one step) and synchronous 1f1b,
both on 4 stages with 8 micro-batches, SGD on the example corpus. Prints
a markdown table of the per-step losses every --every steps and the mean
over the last 10 steps.

With --throughput, instead times both schedules on --ranks ranks (one
stage each) for each of --microbatches: the median step time (rank 0's,
from --metrics, after 3 unmeasured steps) and the tokens per second it
gives, the best of --repeats alternating runs. pipedream-2bw runs without
a flush, so it saves 1f1b's fill and drain, (p - 1) of m + p - 1
micro-batch slots per step.

Usage: bench/pipedream_2bw_gpt.py --pp-compile build/bin/pp-compile
       bench/pipedream_2bw_gpt.py --pp-compile build/bin/pp-compile \
           --throughput --ranks 2 --microbatches 2,4,8 --steps 40
"""

import argparse
import json
import os
import statistics
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


MODEL = os.path.join(ROOT, "examples/gpt/gpt.mlir")
CORPUS = os.path.join(ROOT, "examples/gpt/corpus.txt")


def tokens_per_step():
    """Batch x sequence of the model's token argument (one-hot rows)."""
    with open(MODEL) as f:
        dims = re.search(r"%tokens: tensor<(\d+)x(\d+)x", f.read())
    return int(dims.group(1)) * int(dims.group(2))


def step_time(args, exe, workdir):
    """Median seconds per step of one run, after 3 unmeasured steps."""
    metrics = os.path.join(workdir, "metrics.jsonl")
    run(["mpirun", "-np", str(args.ranks), exe, "--steps",
         str(args.steps + 3), "--lr", str(args.lr), "--corpus", CORPUS,
         "--timeout", "600", "--metrics", metrics])
    with open(metrics) as f:
        seconds = [json.loads(line)["seconds"] for line in f]
    return statistics.median(seconds[3:])


def throughput(args, workdir):
    tokens = tokens_per_step()
    print(f"GPT (examples/gpt/gpt.mlir), {args.ranks} ranks (one stage "
          f"each), {tokens} tokens per step, median of {args.steps} steps, "
          f"best of {args.repeats} runs")
    print("| micro-batches | `1f1b` step (ms) | `pipedream-2bw` step (ms) | "
          "`1f1b` tokens/s | `pipedream-2bw` tokens/s | speed-up |")
    print("|---:|---:|---:|---:|---:|---:|")
    for m in (int(v) for v in args.microbatches.split(",")):
        exes = {}
        for schedule in ("1f1b", "pipedream-2bw"):
            exes[schedule] = os.path.join(workdir, f"{schedule}_{m}")
            run([args.pp_compile, MODEL, "--stages", str(args.ranks),
                 "--microbatches", str(m), "--schedule", schedule, "-o",
                 exes[schedule]])
        best = {s: min(step_time(args, exes[s], workdir)
                       for _ in range(args.repeats)) for s in exes}
        sync, stale = best["1f1b"], best["pipedream-2bw"]
        print(f"| {m} | {sync * 1e3:.2f} | {stale * 1e3:.2f} | "
              f"{tokens / sync:.0f} | {tokens / stale:.0f} | "
              f"{sync / stale:.2f}x |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.3)
    parser.add_argument("--throughput", action="store_true")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--microbatches", default="2,4,8")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.throughput:
        with tempfile.TemporaryDirectory() as workdir:
            throughput(args, workdir)
        return 0
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
