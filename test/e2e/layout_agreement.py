#!/usr/bin/env python3
"""The layout pp-compile --devices plans is the layout of the program it
builds, for every combination of the options the planner sees: devices,
--tensor-parallel, --data-parallel, --stages, --zero, --recompute, and the
schedule
with --slices or --step-plans. Each combination compiles the GPT to its
schedule (--emit=schedule) and either

- prints the layout remark `N devices: T = t, P = p, R = r, ZeRO-z`
  (`, ZeRO-z` left out for z = 0; `, ZeRO per stage z0,z1` where the
  stages' levels differ), and
  every pp.schedule of the program runs p stages (stage_rank), r replicas
  (num_replicas), t processes per rank (pp.tensor_parallel), the given
  slices and the stages' ZeRO levels (the planner's without --zero),
  t x p x r = N, and any option given is kept; or
- where no layout has the given T, R and P, or the options cannot be
  combined, fails with one error line in the user's terms, never with
  internals, and never after printing a layout it then does not build."""

import argparse
import concurrent.futures
import itertools
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
GEN_GPT = os.path.join(ROOT, "examples", "gpt", "gen_gpt.py")
INDEX = os.path.join(HERE, "Inputs", "sample-lengths-plans.txt")
MODEL = ["--layers", "2", "--dim", "16", "--heads", "2", "--positions", "32",
         "--loss", "token-weighted"]
# The step-plan variants (tokens, rows), as test/e2e/step_plans.py.
VARIANTS = [(16, 2), (8, 4), (4, 8)]
# Schedules with what they need: (name, slices, step plans).
SCHEDULES = [("1f1b", 1, False), ("zb-h1", 1, False), ("seq1f1b", 2, False),
             ("greedy", 1, True)]
INTERNALS = ("<<NULL", "Assertion", "Stack dump", "LLVM ERROR",
             "PLEASE submit", "Traceback")


def generate(workdir, seq, rows, extra=()):
    path = os.path.join(workdir, f"gpt-{seq}-{rows}{''.join(extra)}.mlir")
    subprocess.run([sys.executable, GEN_GPT] + MODEL +
                   ["--seq", str(seq), "--batch", str(rows), "-o", path] +
                   list(extra), check=True)
    return path


def options(devices, tp, dp, zero, recompute, schedule, slices, plans,
            models):
    """The pp-compile command line of one combination."""
    flags = ["--devices", str(devices), "--microbatches", "2",
             "--schedule", schedule, "--recompute=" + recompute]
    if zero is not None:
        flags += ["--zero", str(zero)]
    # A recomputing 1-stage step compiles slowly (150x): 2 stages given.
    if recompute != "none":
        flags += ["--stages", "2"]
    if tp is not None:
        flags += ["--tensor-parallel", str(tp)]
    if dp is not None:
        flags += ["--data-parallel", str(dp)]
    if slices > 1:
        flags += ["--slices", str(slices)]
    if plans:
        flags += ["--step-plans", INDEX,
                  "--variant=" + models["plans"][1],
                  "--variant=" + models["plans"][2], "--microbatches", "1"]
        return [models["plans"][0]] + flags
    return [models["plain"]] + flags


def per_stage(levels, stages):
    """The ZeRO levels "1" or "0,3" (or a number) as one per stage."""
    levels = [int(z.split("/")[0]) for z in str(levels).split(",")]
    return tuple(levels * stages if len(levels) == 1 else levels)


def read_schedules(text):
    """(stages, replicas, T, slices, zero per stage) of every pp.schedule in
    `text`."""
    found = []
    for line in text.splitlines():
        if not line.lstrip().startswith("pp.schedule @"):
            continue

        def attr(name, default):
            m = re.search(rf"\b{name} = (\d+)", line)
            return int(m.group(1)) if m else default
        ranks = re.search(r"stage_rank \[([0-9, ]*)\]", line).group(1)
        stages = len(ranks.split(","))
        levels = re.search(r"\bzero = array<i64: ([0-9, ]+)>", line)
        zero = levels.group(1).replace(" ", "") if levels else attr("zero", 0)
        found.append((stages, attr("num_replicas", 1),
                      attr(r"pp\.tensor_parallel", 1), attr("slices", 1),
                      per_stage(zero, stages)))
    return found


def check(pp_compile, workdir, combination, models):
    """'' when the combination's program agrees with its layout, else why
    not."""
    devices, tp, dp, zero, recompute, (schedule, slices, plans) = combination
    out = os.path.join(workdir, "s-" + "-".join(map(str, combination[:5])) +
                       f"-{schedule}.mlir")
    cmd = [pp_compile] + options(devices, tp, dp, zero, recompute, schedule,
                                 slices, plans, models) + [
        "--emit=schedule", "-O0", "-o", out]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    err = proc.stderr
    name = " ".join(cmd[1:])
    if any(s in err for s in INTERNALS) or proc.returncode not in (0, 1, 2):
        return f"{name}: exit {proc.returncode}, internals:\n{err}"
    layout = re.search(r"remark: (\d+) devices: T = (\d+), P = (\d+), "
                       r"R = (\d+)(?:, ZeRO-(\S+)|, ZeRO per stage (\S+))?:",
                       err)
    # The least P: the step-plan models' stage marker makes 2 stages, and
    # levels given per stage as many stages.
    least_stages = 2 if plans or recompute != "none" or "," in str(zero) \
        else 1
    buildable = (tp or 1) * (dp or 1) * least_stages <= devices
    if proc.returncode != 0 and buildable:
        return f"{name}: a layout exists and it is built, but:\n{err}"
    if proc.returncode != 0:
        # Diagnostics at a location, and pp-compile's own option errors.
        errors = re.findall(r"(?:error: |^pp-compile: )", err, re.M)
        if layout:
            return f"{name}: planned T = {layout.group(2)}, P = " \
                f"{layout.group(3)}, R = {layout.group(4)} and failed:\n{err}"
        if len(errors) != 1:
            return f"{name}: {len(errors)} errors, not one:\n{err}"
        return ""
    if not layout:
        return f"{name}: compiled without a layout remark:\n{err}"
    t, p, r = (int(layout.group(i)) for i in (2, 3, 4))
    z = per_stage(layout.group(5) or layout.group(6) or 0, p)
    if t * p * r != devices:
        return f"{name}: T x P x R = {t * p * r}, not {devices}"
    stages = 2 if recompute != "none" else None
    given_zero = per_stage(zero, p) if zero is not None else None
    for given, chosen, what in ((tp, t, "T"), (dp, r, "R"), (stages, p, "P"),
                                (given_zero, z, "ZeRO")):
        if given is not None and given != chosen:
            return f"{name}: {what} = {given} given, {chosen} planned"
    with open(out) as f:
        text = f.read()
    schedules = read_schedules(text)
    want = (p, r, t, slices, z if r > 1 else None)
    for got in schedules:
        if got[:4] != want[:4] or (r > 1 and got[4] != z):
            return (f"{name}: planned (stages, replicas, T, slices, zero) = "
                    f"{want}, the program has {got}")
    if not schedules:
        return f"{name}: no pp.schedule in the program"
    if plans and len(schedules) < 2:
        return f"{name}: {len(schedules)} step plan(s), expected several"
    if recompute == "all" and "pp.recompute" not in text:
        return f"{name}: --recompute=all, but no stage function recomputes"
    return ""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    combinations = [
        (devices, tp, dp, zero, recompute, schedule)
        for devices, tp, dp, (zero, recompute), schedule in itertools.product(
            (2, 4), (None, 2), (None, 2),
            ((0, "none"), (1, "none"), (3, "none"), ("0,3", "none"),
             (None, "none"), (0, "all")),
            SCHEDULES)]
    with tempfile.TemporaryDirectory() as workdir:
        models = {"plain": generate(workdir, 16, 4),
                  "plans": [generate(workdir, seq, rows,
                                     ["--stage-ends", "0"])
                            for seq, rows in VARIANTS]}
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(
                lambda c: check(args.pp_compile, workdir, c, models),
                combinations))
    failures = [r for r in results if r]
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(combinations) - len(failures)} of {len(combinations)} "
          "combinations agree with their layout (or are refused in one line)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
