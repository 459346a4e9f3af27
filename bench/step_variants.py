#!/usr/bin/env python3
"""Step time of one model under variants of its build or its run: each
variant is pp-compile flags and program flags (`--threads 2`,
`--outline-loop-nests=false`), compiled once and run under `--profile` in
alternating rounds, so that a shared machine's load spreads over all.
Prints a table of medians: the step time and, per micro-batch, the
forward and backward time summed over the stages, and each variant's
largest relative loss difference from the first variant's.

  python3 bench/step_variants.py --pp-compile build/bin/pp-compile \\
      --model examples/gpt/gpt-bench.mlir --corpus examples/gpt/corpus.txt \\
      --compile-arg=--gemm=library \\
      --variant '1 thread||--threads 1' --variant '2 threads||--threads 2'

A variant is 'LABEL|COMPILE FLAGS|RUN FLAGS[|PP-COMPILE]' (flags split at
spaces; PP-COMPILE, another pp-compile to build it with, e.g. an older
commit's).
"""

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile


def run(cmd, timeout):
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        sys.exit(f"step_variants.py: FAILED ({proc.returncode}): "
                 f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def parse_variant(spec, pp_compile):
    """(label, compile flags, run flags), compile flags ending with the
    pp-compile to use."""
    parts = spec.split("|")
    if len(parts) not in (3, 4):
        sys.exit(f"step_variants.py: --variant '{spec}': expected "
                 "'LABEL|COMPILE FLAGS|RUN FLAGS[|PP-COMPILE]'")
    tool = parts[3] if len(parts) == 4 else pp_compile
    return parts[0], shlex.split(parts[1]) + [tool], shlex.split(parts[2])


def compile_variant(args, flags, exe):
    *flags, tool = flags
    cmd = [tool, args.model, "--stages", str(args.stages),
           "--ranks", str(args.ranks), "--microbatches",
           str(args.microbatches), "--schedule", args.schedule, "-o",
           exe] + args.compile_arg + flags
    run(cmd, args.timeout)


def profile_run(args, exe, flags, profile):
    """(losses, step ms, forward ms, backward ms) of one --profile run;
    forward and backward per micro-batch, summed over the stages."""
    data = (["--corpus", args.corpus] if args.corpus else
            ["--classes", str(args.classes)] if args.classes else [])
    out = run(["mpirun", "-np", str(args.ranks), exe, "--warmup",
               str(args.warmup), "--steps", str(args.steps), "--profile",
               profile, "--profile-clock", args.clock, "--timeout", "600"]
              + data + flags, args.timeout)
    losses = [float(x) for x in re.findall(r"^step \d+ loss (\S+)$", out,
                                           re.M)]
    with open(profile) as f:
        prof = json.load(f)
    forward = sum(s["forward"] for s in prof["stages"])
    backward = sum(s["backward_input"] + s["backward_weight"]
                   for s in prof["stages"])
    return losses, prof["meta"]["step_time"], forward, backward


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--corpus", help="the program's --corpus")
    parser.add_argument("--classes", type=int,
                        help="the program's --classes (synthetic ids)")
    parser.add_argument("--stages", type=int, default=1)
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--microbatches", type=int, default=1)
    parser.add_argument("--schedule", default="1f1b")
    parser.add_argument("--compile-arg", action="append", default=[],
                        help="a pp-compile flag for every variant")
    parser.add_argument("--variant", action="append", required=True,
                        help="'LABEL|COMPILE FLAGS|RUN FLAGS'")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--clock", default="wall", choices=["wall", "cpu"])
    parser.add_argument("--timeout", type=int, default=1800)
    args = parser.parse_args()
    variants = [parse_variant(v, args.pp_compile) for v in args.variant]
    work = tempfile.mkdtemp(prefix="pp-step-variants-")
    exes = {}
    for _, compile_flags, _ in variants:
        key = tuple(compile_flags)
        if key not in exes:
            exes[key] = os.path.join(work, f"program{len(exes)}")
            compile_variant(args, compile_flags, exes[key])
    loads = [load_average()]
    samples = {label: [] for label, _, _ in variants}
    for round_ in range(args.rounds):
        for i, (label, compile_flags, run_flags) in enumerate(variants):
            sample = profile_run(args, exes[tuple(compile_flags)], run_flags,
                                 os.path.join(work, f"profile{i}.json"))
            samples[label].append(sample)
            print(f"# round {round_ + 1} {label}: step {sample[1]:.2f} ms, "
                  f"forward {sample[2]:.3f}, backward {sample[3]:.3f}",
                  file=sys.stderr, flush=True)
        loads.append(load_average())
    print(f"model {os.path.basename(args.model)}, {args.stages} stages on "
          f"{args.ranks} ranks, {args.microbatches} micro-batches, "
          f"{args.schedule}; {args.rounds} rounds of {args.steps} steps; "
          f"{args.clock} clock; load average {' -> '.join(loads)}")
    print("| variant | step ms | forward ms/mb | backward ms/mb | "
          "steps ms (each round) | max rel. loss diff |")
    print("|---|---:|---:|---:|---|---:|")
    first = samples[variants[0][0]][0][0]
    for label, _, _ in variants:
        runs = samples[label]
        step, forward, backward = (statistics.median(r[i] for r in runs)
                                   for i in (1, 2, 3))
        diff = max(abs(a - b) / max(abs(b), 1e-30)
                   for r in runs for a, b in zip(r[0], first))
        each = ", ".join(f"{r[1]:.1f}" for r in runs)
        print(f"| {label} | {step:.2f} | {forward:.3f} | {backward:.3f} | "
              f"{each} | {diff:.1e} |")


if __name__ == "__main__":
    main()
