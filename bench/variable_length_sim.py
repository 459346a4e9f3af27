#!/usr/bin/env python3
"""Simulated tokens per unit time of variable-length micro-batches against
padding every micro-batch to the step's longest sample, by pp-simulate.

For each step, draws sample lengths from a long-tailed distribution (a
log-normal clipped to [16, max-length], seeded), then
  planned  pp-plan-microbatches cuts them (longest first, DynaPipe's dynamic
           program under the memory cap), pp-schedule schedules the planned
           micro-batches with their own costs;
  padded   the same samples in micro-batches of R samples (as many as the
           memory cap holds at the longest length) all padded to the
           longest, scheduled with that one cost;
with the same cost model for both: a micro-batch of r samples padded to L
tokens takes k + r (b L + c L^2) per stage and phase. Prints the simulated
makespans and useful (unpadded) tokens per unit time. A model, not a
measurement of a training run.

Standard library only. Example:
  python3 bench/variable_length_sim.py --pp-opt build/bin/pp-opt
"""

import argparse
import math
import os
import random
import re
import subprocess
import tempfile

# Per stage and phase (F, B, W): fixed per micro-batch, per token, per
# squared token (attention).
PER_MICROBATCH = (20.0, 40.0, 20.0)
PER_TOKEN = (0.01, 0.02, 0.01)
PER_TOKEN_SQUARED = (2e-6, 4e-6, 0.0)


def lengths_of_step(rng, samples, longest):
    return [max(16, min(longest, int(rng.lognormvariate(math.log(300), 1.0))))
            for _ in range(samples)]


def triple(values):
    return ",".join("%g" % v for v in values)


def run(pp_opt, passes):
    out = subprocess.run([pp_opt, "-"] + passes + ["-o", "/dev/null"],
                         input="module {}\n", capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return out.stderr


def makespan(remarks):
    return float(re.search(r"remark: makespan ([0-9.eE+-]+)",
                           remarks).group(1))


def phase_cost(rows, length, phase):
    return PER_MICROBATCH[phase] + rows * (
        PER_TOKEN[phase] * length + PER_TOKEN_SQUARED[phase] * length ** 2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pp-opt", default="build/bin/pp-opt")
    parser.add_argument("--stages", type=int, default=4)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=4096)
    parser.add_argument("--memory-cap", type=float, default=16384,
                        help="activation tokens one micro-batch may hold")
    parser.add_argument("--schedule", default="1f1b")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    steps = [lengths_of_step(rng, args.samples, args.max_length)
             for _ in range(args.steps)]
    with tempfile.TemporaryDirectory() as tmp:
        index = os.path.join(tmp, "lengths.txt")
        with open(index, "w") as f:
            for step in steps:
                f.write(" ".join(map(str, step)) + "\n")
        print("| step | samples | tokens | longest | planned mbs | planned "
              "makespan | padded mbs x rows | padded makespan | tokens/time "
              "planned | tokens/time padded | speedup |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for k, step in enumerate(steps):
            remarks = run(args.pp_opt, [
                "--pp-plan-microbatches=lengths-file=%s step=%d num-stages=%d "
                "per-microbatch=%s per-token=%s per-token-squared=%s "
                "memory-cap=%g" % (index, k, args.stages,
                                   triple(PER_MICROBATCH), triple(PER_TOKEN),
                                   triple(PER_TOKEN_SQUARED), args.memory_cap),
                "--pp-schedule=schedule=" + args.schedule,
                "--pp-insert-transfers", "--pp-simulate"])
            planned_mbs = int(re.search(r"in ([0-9]+) micro-batches",
                                        remarks).group(1))
            planned = makespan(remarks)
            longest = max(step)
            rows = max(1, int(args.memory_cap // longest))
            mbs = math.ceil(len(step) / rows)
            # The last micro-batch may hold fewer samples; cost it as full,
            # as a padded loader would.
            costs = [phase_cost(rows, longest, p) for p in range(3)]
            padded = makespan(run(args.pp_opt, [
                "--pp-schedule=schedule=%s num-stages=%d num-microbatches=%d "
                "forward-cost=%g backward-input-cost=%g "
                "backward-weight-cost=%g activation-memory=%g" % (
                    args.schedule, args.stages, mbs, costs[0], costs[1],
                    costs[2], rows * longest),
                "--pp-insert-transfers", "--pp-simulate"]))
            tokens = sum(step)
            print("| %d | %d | %d | %d | %d | %.6g | %d x %d | %.6g | %.4g | "
                  "%.4g | %.2fx |" % (k, len(step), tokens, longest,
                                      planned_mbs, planned, mbs, rows, padded,
                                      tokens / planned, tokens / padded,
                                      padded / planned))


if __name__ == "__main__":
    main()
