#!/usr/bin/env python3
"""How `pp-schedule{schedule=auto}` compares with the built-in schedules on
random heterogeneous problems under a memory cap.

Each problem has p stages on p ranks and m micro-batches; F, B and W of every
stage are uniform in [0.5, 2], the transfer time uniform in [0, 0.2],
activation memory 1 per micro-batch of a stage (freed at B). The memory cap
is 1F1B's peak activation memory on that problem. Every built-in the given
pp-opt registers (fused and split backward) and `auto` run through
`--pp-schedule --pp-insert-transfers{semantics=async} --pp-verify-schedule
--pp-simulate`;
a built-in fits when the verifier accepts it under the cap. Reported: how
often auto strictly beats the best fitting built-in and by how much, that it
is never worse (by pp-simulate), how often it proves its schedule optimal (by exhaustive search or by
meeting its lower bound),
and its gap to the lower bound it reports.

Standard library only. Example:
  python3 bench/auto_random.py --pp-opt build/bin/pp-opt --problems 100
"""

import argparse
import concurrent.futures
import random
import re
import statistics
import struct
import subprocess
import sys
import time

MAKESPAN = re.compile(r"pp\.makespan = ([0-9a-fA-Fx.eE+-]+)")
PEAK = re.compile(r"remark: makespan .*peak activation memory per rank: (.*)$",
                  re.M)
AUTO = re.compile(r"remark: auto: makespan \S+ \((.*)\), peak activation "
                  r"memory \S+; (proven optimal by exhaustive search, |"
                  r"proven optimal: meets the )?lower bound ([-+.\deE]+)")


def parse_f64(text):
    if text.startswith("0x"):
        return struct.unpack(">d", bytes.fromhex(text[2:].rjust(16, "0")))[0]
    return float(text)


def schedules(pp_opt):
    """The generator names in pp-opt's 'unknown schedule' diagnostic."""
    proc = subprocess.run(
        [pp_opt, "-", "--pp-schedule=schedule=__list__ num-stages=2",
         "-o", "/dev/null"], input="module {}\n", capture_output=True,
        text=True)
    m = re.search(r"expected one of: (.*)", proc.stderr)
    if not m:
        sys.exit("cannot read the schedule names from pp-opt")
    return [n.strip() for n in m.group(1).split(",")]


def problem(rng, p, m):
    def per_stage():
        return [rng.uniform(0.5, 2.0) for _ in range(p)]
    return {"p": p, "m": m, "F": per_stage(), "B": per_stage(),
            "W": per_stage(), "comm": rng.uniform(0.0, 0.2)}


def simulate(pp_opt, pb, name, split, cap=None):
    """(makespan, peak memory, stderr) or None if rejected or over the cap."""
    def values(xs):
        return ",".join(repr(x) for x in xs)
    options = [f"schedule={name}", f"split-backward={int(split)}",
               f"num-stages={pb['p']}", f"num-microbatches={pb['m']}",
               f"forward-cost={values(pb['F'])}",
               f"backward-input-cost={values(pb['B'])}",
               f"backward-weight-cost={values(pb['W'])}",
               f"comm-cost={pb['comm']!r}"]
    if cap is not None:
        options.append(f"memory-cap={cap!r}")
    proc = subprocess.run(
        [pp_opt, "-", "--pp-schedule=" + " ".join(options),
         "--pp-insert-transfers=semantics=async", "--pp-verify-schedule",
         "--pp-simulate", "-o", "-"], input="module {}\n", capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    makespan = parse_f64(MAKESPAN.search(proc.stdout).group(1))
    peak = max(float(x) for x in PEAK.search(proc.stderr).group(1).split(","))
    return makespan, peak, proc.stderr


def evaluate(pp_opt, names, pb):
    """Auto's result and the best built-in's on one problem."""
    cap = simulate(pp_opt, pb, "1f1b", False)[1]
    best, best_name = float("inf"), None
    for name in names:
        if name == "auto":
            continue
        for split in (False, True):
            result = simulate(pp_opt, pb, name, split, cap)
            if result and result[0] < best:
                best, best_name = result[0], name + (" (split)" * split)
    start = time.perf_counter()
    result = simulate(pp_opt, pb, "auto", True, cap)
    seconds = time.perf_counter() - start
    if result is None:
        return {"error": "auto failed"}
    makespan, peak, remarks = result
    claim = AUTO.search(remarks)
    return {"auto": makespan, "peak": peak, "cap": cap, "builtin": best,
            "builtin_name": best_name, "found_by": claim.group(1),
            "proven": claim.group(2) is not None,
            "bound": float(claim.group(3)), "seconds": seconds}


def gap(row):
    """Auto's gap to its lower bound in %: none where it proved optimality
    (the printed bound is rounded to 6 digits)."""
    if row["proven"]:
        return 0.0
    return 100 * (row["auto"] - row["bound"]) / row["bound"]


def summarise(p, m, rows):
    n = len(rows)
    beats = [r for r in rows if r["auto"] < r["builtin"] - 1e-9]
    worse = [r for r in rows if r["auto"] > r["builtin"] + 1e-9]
    over = [r for r in rows if r["peak"] > r["cap"] + 1e-9]
    gains = [100 * (r["builtin"] - r["auto"]) / r["builtin"] for r in beats]
    gaps = [gap(r) for r in rows]
    found = {}
    for r in rows:
        found[r["found_by"]] = found.get(r["found_by"], 0) + 1
    winners = {}
    for r in rows:
        winners[r["builtin_name"]] = winners.get(r["builtin_name"], 0) + 1
    seconds = [r["seconds"] for r in rows]
    print(f"== p={p}, m={m}: {n} problems, cap = 1F1B's peak ==")
    print(f"auto strictly beats the best fitting built-in: {len(beats)}/{n}")
    if gains:
        print(f"  by mean {statistics.mean(gains):.2f}%, "
              f"max {max(gains):.2f}% (of the built-in's makespan)")
    print(f"auto worse than the best fitting built-in: {len(worse)}/{n}")
    print(f"auto over the memory cap: {len(over)}/{n}")
    print(f"auto proven optimal (exhaustive search or lower bound met): "
          f"{sum(r['proven'] for r in rows)}/{n}")
    print(f"auto's gap to its lower bound: mean {statistics.mean(gaps):.2f}%,"
          f" max {max(gaps):.2f}%")
    print("auto's schedule came from: " + ", ".join(
        f"{k} {v}" for k, v in sorted(found.items(), key=lambda kv: -kv[1])))
    print("best fitting built-in: " + ", ".join(
        f"{k} {v}" for k, v in sorted(winners.items(), key=lambda kv: -kv[1])))
    print(f"auto's pp-opt run: mean {statistics.mean(seconds):.2f} s, "
          f"max {max(seconds):.2f} s")
    print()
    return not worse and not over


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pp-opt", required=True)
    parser.add_argument("--problems", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1130)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sizes", default="4x8",
                        help="comma-separated p x m, e.g. 4x8,8x16")
    parser.add_argument("--verbose", action="store_true",
                        help="one line per problem")
    args = parser.parse_args()
    names = schedules(args.pp_opt)
    print(f"pp-opt: {args.pp_opt}; schedules: {', '.join(names)}")
    print(f"seed {args.seed}; F, B, W per stage in [0.5, 2], transfer in "
          f"[0, 0.2], activation 1, stash 0\n")
    ok = True
    for size in args.sizes.split(","):
        p, m = (int(x) for x in size.split("x"))
        rng = random.Random(f"{args.seed}-{p}-{m}")
        pbs = [problem(rng, p, m) for _ in range(args.problems)]
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(lambda pb: evaluate(args.pp_opt, names, pb),
                                 pbs))
        if any("error" in r for r in rows):
            print(f"p={p}, m={m}: auto failed on some problems")
            ok = False
            continue
        if args.verbose:
            print(" #  auto       best built-in         gain %  gap %  "
                  "found by")
            for i, r in enumerate(rows):
                gain = 100 * (r["builtin"] - r["auto"]) / r["builtin"]
                print(f"{i:2}  {r['auto']:9.4f}  {r['builtin']:9.4f} "
                      f"{r['builtin_name']:12} {gain:6.2f}  {gap(r):5.2f}  "
                      f"{r['found_by']}{' (proven)' * r['proven']}")
        ok &= summarise(p, m, rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
