#!/usr/bin/env python3
"""The GPT trained under seq1f1b with each micro-batch's sequence cut into
k = 1, 2, 4 slices, every slice its own action (pp-compile --slices k):
per-step losses against k = 1, step time, and each rank's peak activation
memory as the runtime counts it (--print-memory: the bytes the forwards
leave for their backwards, from each forward's end until the phase that
frees them) next to pp-simulate's prediction for the same schedule (its
peak in micro-batches times the bytes one micro-batch's slices hold on
that stage, from the runtime's --profile).

Every k compiles the same unsliced model to the same pipeline (seq1f1b,
--ranks stages; k = 1 is 1f1b) and runs it on the same corpus batches.
With uniform slices pp-simulate predicts p - r + k - 1 slices on rank r.

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
MEASURED_PEAK = re.compile(r"^activation memory rank (\d+): peak (\d+) bytes$",
                           re.M)


def run(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return proc


def schedule_of(k):
    """seq1f1b with k slices; with one slice it is 1f1b."""
    return "seq1f1b" if k > 1 else "1f1b"


def simulated_peak(args, k):
    """Each rank's peak activation memory (micro-batches) under seq1f1b."""
    options = (f"schedule={schedule_of(k)} num-stages={args.ranks} "
               f"num-microbatches={args.microbatches} slices={k}")
    proc = run([os.path.join(args.build, "bin", "pp-opt"),
                f"--pp-schedule={options}", "--pp-insert-transfers",
                "--pp-simulate", "-o", os.devnull], input="module {}")
    return [float(v) for v in
            SIMULATED_PEAK.search(proc.stderr).group(1).split(",")]


def measure(args, workdir, k):
    program = os.path.join(workdir, f"gpt-k{k}")
    run([os.path.join(args.build, "bin", "pp-compile"), args.model,
         "--stages", str(args.ranks), "--microbatches", str(args.microbatches),
         "--schedule", schedule_of(k), "--slices", str(k), "-o", program])
    metrics = os.path.join(workdir, f"metrics-k{k}.jsonl")
    profile = os.path.join(workdir, f"profile-k{k}.json")
    proc = run(["mpiexec", "-n", str(args.ranks), program, "--steps",
                str(args.steps), "--lr", "0.3", "--corpus", args.corpus,
                "--metrics", metrics, "--print-memory"])
    peaks = {int(r): int(b) for r, b in MEASURED_PEAK.findall(proc.stdout)}
    steps = [json.loads(line) for line in open(metrics)]
    losses = [step["loss"] for step in steps]
    seconds = [step["seconds"] for step in steps[args.warmup:]]
    run(["mpiexec", "-n", str(args.ranks), program, "--steps", "2",
         "--warmup", "1", "--corpus", args.corpus, "--profile", profile])
    stages = json.load(open(profile))["stages"]
    per_microbatch = [stage["activation_memory"] for stage in stages]
    return (losses, statistics.median(seconds),
            [peaks[r] for r in range(args.ranks)], per_microbatch)


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
          f"seq1f1b, {args.microbatches} micro-batches, {args.steps} steps "
          f"(median step time after {args.warmup})")
    print(f"{'k':>2} {'step ms':>8} {'max rel loss diff':>17} "
          f"{'peak KiB per rank (runtime)':>28} "
          f"{'predicted KiB per rank':>23} {'sim. peak (mb)':>15}")
    with tempfile.TemporaryDirectory() as workdir:
        reference = None
        for k in slices:
            losses, seconds, peaks, per_mb = measure(args, workdir, k)
            reference = reference or losses
            diff = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
            sim = simulated_peak(args, k)
            predicted = [s * m for s, m in zip(sim, per_mb)]
            print(f"{k:>2} {seconds * 1e3:>8.2f} {diff:>17.2e} "
                  f"{', '.join(f'{p / 1024:.1f}' for p in peaks):>28} "
                  f"{', '.join(f'{p / 1024:.1f}' for p in predicted):>23} "
                  f"{', '.join(f'{s:g}' for s in sim):>15}")


if __name__ == "__main__":
    main()
