#!/usr/bin/env python3
"""The GPT trained with its step computed in k = 1, 2, 4 sequence slices
(pp-split-sequence): per-step losses against k = 1, step time, the
activation memory a stage keeps per micro-batch (the runtime's profile) and
each rank's peak resident memory, next to the peak activation memory that
seq1f1b would hold once the runtime runs slices as actions (pp-simulate).

Every k compiles the same model (after `pp-opt --pp-split-sequence
slices=k` for k > 1) to the same pipeline (1f1b, --ranks stages) and runs
it on the same corpus batches. The slices run inside each stage's
whole-micro-batch actions, so the measured activation memory is that of
the sliced equations (the keys and values concatenated for later slices
are extra copies), not yet seq1f1b's; the last column is what seq1f1b
would hold on rank 0, in micro-batches, under pp-simulate with uniform
slices: (p + k - 1) / k, against 1f1b's p.

Standard library only. Example:
  python3 bench/seq1f1b_train.py --build build
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIMULATED_PEAK = re.compile(r"peak activation memory per rank: ([0-9., e+-]+)")


def run(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return proc


def simulated_peak(args, k):
    """Rank 0's peak activation memory (micro-batches) under seq1f1b (1f1b
    for k = 1)."""
    options = (f"schedule=1f1b num-stages={args.ranks} "
               f"num-microbatches={args.microbatches}")
    if k > 1:
        options = options.replace("1f1b", "seq1f1b") + f" slices={k}"
    proc = run([os.path.join(args.build, "bin", "pp-opt"),
                f"--pp-schedule={options}", "--pp-insert-transfers",
                "--pp-simulate", "-o", os.devnull], input="module {}")
    return float(SIMULATED_PEAK.search(proc.stderr).group(1).split(",")[0])


def measure(args, workdir, k):
    model = args.model
    if k > 1:
        model = os.path.join(workdir, f"model-k{k}.mlir")
        run([os.path.join(args.build, "bin", "pp-opt"), args.model,
             f"--pp-split-sequence=slices={k}", "-o", model])
    program = os.path.join(workdir, f"gpt-k{k}")
    run([os.path.join(args.build, "bin", "pp-compile"), model,
         "--stages", str(args.ranks), "--microbatches", str(args.microbatches),
         "--schedule", "1f1b", "-o", program])
    metrics = os.path.join(workdir, f"metrics-k{k}.jsonl")
    profile = os.path.join(workdir, f"profile-k{k}.json")
    proc = run(["mpiexec", "-n", str(args.ranks), "/usr/bin/time", "-f",
                "maxrss %M", program, "--steps", str(args.steps), "--lr",
                "0.3", "--corpus", args.corpus, "--metrics", metrics])
    rss = [int(x) for x in re.findall(r"^maxrss (\d+)$", proc.stderr, re.M)]
    steps = [json.loads(line) for line in open(metrics)]
    losses = [step["loss"] for step in steps]
    seconds = [step["seconds"] for step in steps[args.warmup:]]
    run(["mpiexec", "-n", str(args.ranks), program, "--steps", "2",
         "--warmup", "1", "--corpus", args.corpus, "--profile", profile])
    stages = json.load(open(profile))["stages"]
    activation = [stage["activation_memory"] for stage in stages]
    return losses, statistics.median(seconds), activation, rss


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--model",
                        default=os.path.join(ROOT, "examples/gpt/gpt.mlir"))
    parser.add_argument("--corpus",
                        default=os.path.join(ROOT, "examples/gpt/corpus.txt"))
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3,
                        help="steps left out of the median step time")
    parser.add_argument("--slices", default="1,2,4")
    args = parser.parse_args()
    slices = [int(k) for k in args.slices.split(",")]
    print(f"model {os.path.relpath(args.model, ROOT)}, {args.ranks} ranks, "
          f"1f1b, {args.microbatches} micro-batches, {args.steps} steps "
          f"(median step time after {args.warmup})")
    print(f"{'k':>2} {'step ms':>8} {'max rel loss diff':>17} "
          f"{'activation KiB/mb per stage':>28} {'max RSS MiB per rank':>21} "
          f"{'seq1f1b peak (sim)':>18}")
    with tempfile.TemporaryDirectory() as workdir:
        reference = None
        for k in slices:
            losses, seconds, activation, rss = measure(args, workdir, k)
            reference = reference or losses
            diff = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
            kib = ", ".join(f"{a / 1024:.1f}" for a in activation)
            mib = ", ".join(f"{r / 1024:.1f}" for r in rss)
            print(f"{k:>2} {seconds * 1e3:>8.2f} {diff:>17.2e} {kib:>28} "
                  f"{mib:>21} {simulated_peak(args, k):>18.3g}")


if __name__ == "__main__":
    main()
