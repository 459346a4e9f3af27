#!/usr/bin/env python3
"""How `pp-schedule{schedule=auto}` compares with greedy list schedules and
every named schedule on random problems under per-rank memory caps.

Each problem has p stages on p ranks and m micro-batches; F, B and W of every
stage are uniform in [0.5, 2], the transfer time uniform in [0, 0.2],
activation memory per stage uniform in [0.5, 1.5] with a stash for W of up
to 0.6 of it. Each rank's cap is 1F1B's peak on that rank (so rank r holds
about p - r micro-batches). Compared with auto, all under the caps:

- every named schedule pp-opt registers (fused and split backward; `greedy`,
  pp's list schedule, among them), run through `--pp-schedule
  --pp-insert-transfers{semantics=async} --pp-verify-schedule --pp-simulate`
  (each receive right before its consumer, as auto models it; it fits when
  the verifier accepts it);
- `py-greedy`, an independent list scheduler written here: whenever a rank
  is free it runs the action that can start first (input gradients before
  forwards before weight gradients on ties, earlier stages first), forwards
  only while they fit the rank's cap, so weight gradients fill the time the
  rank would otherwise wait; timed by this script's own model.

Reported per size: how often auto is strictly faster than, equal to, or
slower than the best named schedule, pp's greedy and py-greedy, by how much,
how often auto proves its schedule optimal, how often its local search
improved its best candidate ("local"), whether it kept every rank within
its cap, and its run time. Auto must never be slower (exit status 1
otherwise).

Standard library only. Example:
  python3 bench/auto_vs_greedy.py --pp-opt build/bin/pp-opt --sizes 2x8,4x12,8x16,16x24 --problems 20
"""

import argparse
import concurrent.futures
import random
import re
import statistics
import subprocess
import sys
import time

from auto_random import AUTO, parse_f64, schedules

MAKESPAN = re.compile(r"pp\.makespan = ([0-9a-fA-Fx.eE+-]+)")
PEAKS = re.compile(r"remark: makespan .*peak activation memory per rank: (.*)$",
                   re.M)
F, B, W = 0, 1, 2


def problem(rng, p, m):
    def per_stage(lo, hi):
        return [rng.uniform(lo, hi) for _ in range(p)]
    act = per_stage(0.5, 1.5)
    return {"p": p, "m": m, "cost": [per_stage(0.5, 2.0) for _ in range(3)],
            "comm": rng.uniform(0.0, 0.2), "act": act,
            "stash": [a * rng.uniform(0.0, 0.6) for a in act]}


def values(xs):
    return ",".join(repr(x) for x in xs)


def simulate(pp_opt, pb, name, split, caps=None):
    """(makespan, per-rank peaks, stderr, seconds) or None if rejected."""
    options = [f"schedule={name}", f"split-backward={int(split)}",
               f"num-stages={pb['p']}", f"num-microbatches={pb['m']}",
               f"forward-cost={values(pb['cost'][F])}",
               f"backward-input-cost={values(pb['cost'][B])}",
               f"backward-weight-cost={values(pb['cost'][W])}",
               f"comm-cost={pb['comm']!r}",
               f"activation-memory={values(pb['act'])}",
               f"stash-memory={values(pb['stash'])}"]
    if caps is not None:
        options.append(f"memory-cap={values(caps)}")
    start = time.perf_counter()
    proc = subprocess.run(
        [pp_opt, "-", "--pp-schedule=" + " ".join(options),
         "--pp-insert-transfers=semantics=async", "--pp-verify-schedule",
         "--pp-simulate", "-o", "-"], input="module {}\n",
        capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        return None
    makespan = parse_f64(MAKESPAN.search(proc.stdout).group(1))
    peaks = [float(x) for x in PEAKS.search(proc.stderr).group(1).split(",")]
    return makespan, peaks, proc.stderr, seconds


def py_greedy(pb, caps):
    """The makespan of this script's own list schedule, or None if the caps
    leave a rank nothing to do."""
    p, m = pb["p"], pb["m"]
    dur = pb["cost"]
    delta = [pb["act"], [pb["stash"][s] - pb["act"][s] for s in range(p)],
             [-x for x in pb["stash"]]]
    nxt = [[0] * p for _ in range(3)]
    end = {}
    clock, held = [0.0] * p, [0.0] * p

    def ready(phase, s):
        mb = nxt[phase][s]
        if mb == m:
            return None
        if phase == F:
            if s == 0:
                return 0.0
            t = end.get((F, s - 1, mb))
            return None if t is None else t + pb["comm"]
        if phase == B:
            own = end.get((F, s, mb))
            if own is None:
                return None
            if s == p - 1:
                return own
            t = end.get((B, s + 1, mb))
            return None if t is None else max(own, t + pb["comm"])
        return end.get((B, s, mb))

    for _ in range(3 * p * m):
        best = None
        for s in range(p):
            for phase in (B, F, W):
                t = ready(phase, s)
                if t is None:
                    continue
                if phase == F and held[s] + delta[F][s] > caps[s] + 1e-9:
                    continue
                key = (max(clock[s], t), phase != B, phase == W, s)
                if best is None or key < best[0]:
                    best = (key, phase, s)
        if best is None:
            return None
        (start, *_), phase, s = best
        mb = nxt[phase][s]
        clock[s] = end[(phase, s, mb)] = start + dur[phase][s]
        held[s] += delta[phase][s]
        nxt[phase][s] += 1
    return max(clock)


def evaluate(pp_opt, names, pb):
    # The remark prints 6 digits: a little slack keeps 1F1B within them.
    caps = [x * (1 + 1e-5) for x in simulate(pp_opt, pb, "1f1b", False)[1]]
    named = {}
    for name in names:
        if name in ("auto", "exact"):  # exact: auto's search alone
            continue
        for split in (False, True):
            result = simulate(pp_opt, pb, name, split, caps)
            if result:
                key = name + (" (split)" if split else "")
                named[key] = result[0]
    auto = simulate(pp_opt, pb, "auto", True, caps)
    if auto is None:
        return {"error": "auto failed"}
    makespan, peaks, remarks, seconds = auto
    claim = AUTO.search(remarks)
    greedy = min((v for k, v in named.items() if k.startswith("greedy")),
                 default=float("inf"))
    others = {k: v for k, v in named.items() if not k.startswith("greedy")}
    best_name = min(others, key=others.get)
    return {"auto": makespan, "over": any(x > c + 1e-9
                                          for x, c in zip(peaks, caps)),
            "greedy": greedy, "py-greedy": py_greedy(pb, caps) or
            float("inf"), "named": others[best_name], "named_name": best_name,
            "found_by": claim.group(1), "proven": claim.group(2) is not None,
            "seconds": seconds}


def compare(rows, key):
    """Auto against `key`: (wins, ties, losses, mean gain % of wins, max
    gain %, max loss %)."""
    wins = [100 * (r[key] - r["auto"]) / r[key] for r in rows
            if r["auto"] < r[key] - 1e-9]
    losses = [100 * (r["auto"] - r[key]) / r[key] for r in rows
              if r["auto"] > r[key] + 1e-9]
    ties = len(rows) - len(wins) - len(losses)
    return (len(wins), ties, len(losses),
            statistics.mean(wins) if wins else 0.0,
            max(wins, default=0.0), max(losses, default=0.0))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pp-opt", required=True)
    parser.add_argument("--problems", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1201)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sizes", default="2x8,4x12,8x16,16x24",
                        help="comma-separated p x m")
    args = parser.parse_args()
    names = schedules(args.pp_opt)
    print(f"pp-opt: {args.pp_opt}; schedules: {', '.join(names)}")
    print(f"seed {args.seed}; {args.problems} problems per size; caps per "
          f"rank = 1F1B's peaks\n")
    print("p   m  | vs best named: win/tie/loss  mean/max gain  max loss | "
          "vs greedy: w/t/l  mean/max | vs py-greedy: w/t/l  mean/max | "
          "proven | local | over cap | auto s mean/max")
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
        cells = []
        for key in ("named", "greedy", "py-greedy"):
            w, t, l, mean, most, loss = compare(rows, key)
            ok &= l == 0
            cell = f"{w}/{t}/{l}  {mean:.2f}/{most:.2f}%"
            if key == "named":
                cell += f"  {loss:.2f}%"
            cells.append(cell)
        over = sum(r["over"] for r in rows)
        local = sum("local moves" in r["found_by"] for r in rows)
        ok &= over == 0
        seconds = [r["seconds"] for r in rows]
        print(f"{p:<3} {m:<3}| {cells[0]:>38} | {cells[1]:>26} | "
              f"{cells[2]:>26} | {sum(r['proven'] for r in rows):>3}/"
              f"{len(rows):<3}| {local:>5} | {over:>4}     | "
              f"{statistics.mean(seconds):.2f}/{max(seconds):.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
