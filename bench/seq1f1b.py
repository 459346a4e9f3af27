#!/usr/bin/env python3
"""Seq1F1B (sequence-sliced 1F1B) against 1F1B under pp-simulate: step time
(makespan), bubble and peak activation memory for k = 1, 2, 4 sequence
slices per micro-batch, over a grid of ranks p and micro-batches m.

Costs are per micro-batch of a stage: F = 1, B = 1, W = 1 (fused backward),
one unit of activation memory, and a transfer time `comm` (0, and 0.1 of a
forward); every slice costs 1/k of them (uniform slices; causal attention
makes later slices costlier, which uniform costs leave out). k = 1 is 1f1b.
Rendezvous transfers as pp-insert-transfers orders them by default. With
comm = 0 the makespan equals (m k + p - 1)(F + B + W) / k and rank 0 holds
(p + k - 1) / k micro-batches; the table prints both.

Standard library only. Example:
  python3 bench/seq1f1b.py --pp-opt build/bin/pp-opt
"""

import argparse
import re
import subprocess
import sys

GRID = [(2, 4), (4, 8), (4, 16), (8, 16), (8, 32)]
SLICES = (1, 2, 4)
COMMS = (0.0, 0.1)
REMARK = re.compile(r"remark: makespan (\S+), bubble (\S+)% .*peak activation "
                    r"memory per rank: ([0-9., e+-]+)")


def simulate(pp_opt, p, m, k, comm):
    """Makespan, bubble (%) and per-rank peak memory pp-simulate reports."""
    schedule = (f"schedule=1f1b num-stages={p} num-microbatches={m}"
                if k == 1 else
                f"schedule=seq1f1b num-stages={p} num-microbatches={m} "
                f"slices={k}")
    cmd = [pp_opt, "-", f"--pp-schedule={schedule} comm-cost={comm}",
           "--pp-insert-transfers", "--pp-verify-schedule=semantics=rendezvous",
           "--pp-simulate", "-o", "/dev/null"]
    proc = subprocess.run(cmd, input="module {}\n", capture_output=True,
                          text=True, timeout=600)
    match = REMARK.search(proc.stderr)
    if proc.returncode != 0 or not match:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{proc.stderr}")
    peaks = [float(x) for x in match.group(3).split(",")]
    return float(match.group(1)), float(match.group(2)), peaks


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pp-opt", required=True)
    args = ap.parse_args()
    for comm in COMMS:
        print(f"\n== comm = {comm:g} per micro-batch (F = B = W = 1) ==\n")
        print("| p | m | k | makespan | closed form | vs k=1 | bubble | "
              "peak rank 0 (micro-batches) | closed form | vs k=1 |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for p, m in GRID:
            base = None
            for k in SLICES:
                makespan, bubble, peaks = simulate(args.pp_opt, p, m, k, comm)
                if base is None:
                    base = (makespan, peaks[0])
                closed = (m * k + p - 1) * 3 / k
                closed_peak = (p + k - 1) / k
                print(f"| {p} | {m} | {k} | {makespan:g} | "
                      f"{closed:g}{'' if comm == 0 else ' (no comm)'} | "
                      f"{makespan / base[0]:.3f} | {bubble:g}% | "
                      f"{peaks[0]:g} | {closed_peak:g} | "
                      f"{peaks[0] / base[1]:.3f} |")


if __name__ == "__main__":
    main()
