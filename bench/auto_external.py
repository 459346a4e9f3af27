#!/usr/bin/env python3
"""`pp-schedule{schedule=auto}` against every built-in schedule and two
greedy schedulers of a different design, written here without pp's code,
all measured by the same yardstick: `pp-insert-transfers{semantics=S}
--pp-verify-schedule{semantics=S} --pp-simulate{semantics=S}` for S = async
and rendezvous (auto is told S with `pp-schedule{semantics=S}`).

Problems (seeded, p stages on p ranks): p uniform in [4, 16], m uniform in
[p, 3p]; F, B, W of every stage uniform in [0.5, 2], [0.5, 2.5] and
[0.1, 2] (light and heavy weight gradients); the transfer time uniform in
[0, 1] x the mean forward; activation memory per stage uniform in
[0.5, 1.5], a stash for W of up to half of it; rank r's cap its stage's
activation times max(2, (p - r) x a factor uniform in [0.5, 1.5]) (below
and above what 1F1B holds there).

The external schedulers produce per-rank orders of F, B and W (split
backward) within the caps:

- `zb-greedy`, the design of the Zero Bubble repository's heuristic
  ("auto schedule", ICLR 2024): micro-batch by micro-batch, each stage
  runs as many warm-up forwards as fill the time until the first backward
  comes back (within memory), then per micro-batch one forward on every
  stage (later stages may hold back when earlier ones run ahead), then the
  backwards from the last stage down, and weight gradients wherever a
  stage would wait for its input or needs memory; eight variants of its
  three switches, the fastest by its own timing.
- `cp-list`, a critical-path list scheduler: whenever a rank is free it
  starts, among the actions whose inputs have arrived and that fit its
  memory cap, the one with the longest path to the end of the step
  (durations and transfers along F -> F -> ... -> B -> ... -> W chains),
  breaking ties toward backwards.

Both time schedules with each input arriving the transfer time after it is
computed (async transfers). Their orders are written as `pp.schedule` IR
and measured as above, like every other candidate. A candidate counts when
pp-verify-schedule accepts it and every rank stays within its cap.

Prints per semantics: auto against the best built-in, zb-greedy, cp-list
and the best of all, as wins / ties / losses (ties within a relative
1e-9), the worst ratio auto / other, and auto's generation time. Exits 1
if auto is worse than a candidate of the kinds `--must-beat` names (all by
default) on any problem.

Standard library only. Example:
  python3 bench/auto_external.py --pp-opt build/bin/pp-opt --problems 200
"""

import argparse
import concurrent.futures
import random
import re
import subprocess
import sys
import time

from auto_random import parse_f64, schedules

SEED = 20261203
F, B, W = 0, 1, 2
MAKESPAN = re.compile(r"pp\.makespan = ([0-9a-fA-Fx.eE+-]+)")
PEAK = re.compile(r"pp\.peak_memory = array<f64: ([^>]*)>")
REL = 1e-9


def make_problem(rng, max_ranks=16):
    p = rng.randint(4, max_ranks)
    m = rng.randint(p, 3 * p)
    f = [rng.uniform(0.5, 2.0) for _ in range(p)]
    b = [rng.uniform(0.5, 2.5) for _ in range(p)]
    w = [rng.uniform(0.1, 2.0) for _ in range(p)]
    comm = rng.uniform(0.0, 1.0) * sum(f) / p
    act = [rng.uniform(0.5, 1.5) for _ in range(p)]
    stash = [a * rng.uniform(0.0, 0.5) for a in act]
    cap = [act[r] * max(2.0, (p - r) * rng.uniform(0.5, 1.5))
           for r in range(p)]
    return {"p": p, "m": m, "cost": [f, b, w], "comm": comm, "act": act,
            "stash": stash, "cap": cap}


def delta(pb, phase, s):
    return [pb["act"][s], pb["stash"][s] - pb["act"][s], -pb["stash"][s]][phase]


# --- the external schedulers ---------------------------------------------


def zb_greedy_variant(pb, warm_bubble, hold_back, fill_always):
    """One variant of the Zero-Bubble-style heuristic: per-stage orders of
    (phase, mb), or None if the caps leave a stage unable to go on."""
    p, m, comm = pb["p"], pb["m"], pb["comm"]
    cost = pb["cost"]
    nxt = [[0] * p for _ in range(3)]
    end = {}           # (phase, s, mb) -> completion time
    free = [0.0] * p   # when each stage is free
    mem = [0.0] * p
    idle = [0.0] * p   # waiting each stage accumulated
    order = [[] for _ in range(p)]

    def arrival(phase, s):
        mb = nxt[phase][s]
        if phase == F:
            return 0.0 if s == 0 else end[(F, s - 1, mb)] + comm
        if phase == B:
            own = end[(F, s, mb)]
            return own if s == p - 1 else max(own, end[(B, s + 1, mb)] + comm)
        return end[(B, s, mb)]

    def run(s, phase):
        mb = nxt[phase][s]
        start = max(free[s], arrival(phase, s))
        if nxt[F][s] > 0:
            idle[s] += start - free[s]
        free[s] = start + cost[phase][s]
        end[(phase, s, mb)] = free[s]
        mem[s] += delta(pb, phase, s)
        nxt[phase][s] += 1
        order[s].append((phase, mb))

    def fits(s, phase):
        return mem[s] + delta(pb, phase, s) <= pb["cap"][s] + 1e-9

    def make_room(s, phase):
        while not fits(s, phase):
            if nxt[W][s] >= nxt[B][s]:
                return False
            run(s, W)
        return True

    def fill_until(s, ready):
        # Weight gradients that end before the input arrives are free.
        while nxt[W][s] < nxt[B][s] and free[s] + cost[W][s] <= ready:
            run(s, W)
        if nxt[W][s] < nxt[B][s] and free[s] < ready:
            worst = max(idle)
            if fill_always or ready - free[s] > worst - idle[s]:
                run(s, W)

    def ensure_forward(s, mb):
        # Forwards run in micro-batch order down the stages.
        while nxt[F][s] <= mb:
            if s > 0 and not ensure_forward(s - 1, nxt[F][s]):
                return False
            if not make_room(s, F):
                return False
            run(s, F)
        return True

    # Micro-batch 0: its forwards, then the warm-up forwards each stage can
    # run before micro-batch 0's backward reaches it, then its backwards.
    for s in range(p):
        if not make_room(s, F):
            return None
        run(s, F)
    extra = [0] * p
    back = end[(F, p - 1, 0)] + cost[B][p - 1]
    for s in range(p - 2, -1, -1):
        t, held = free[s], mem[s]
        while nxt[F][s] + extra[s] < m:
            a = pb["act"][s]
            if held + a > pb["cap"][s] + 1e-9:
                break
            if warm_bubble and t + cost[F][s] > back + comm:
                break
            if not warm_bubble and t >= back + comm:
                break
            held += a
            t += cost[F][s]
            extra[s] += 1
        back = max(t, back + comm) + cost[B][s]
    for s in range(1, p):
        while extra[s] > 0 and extra[s] >= extra[s - 1] and \
                nxt[F][s] + extra[s] < m:
            extra[s] -= 1
    for s in range(p):
        if extra[s] and not ensure_forward(s, nxt[F][s] + extra[s] - 1):
            return None
    for s in range(p - 1, -1, -1):
        if not make_room(s, B):
            return None
        run(s, B)
    # Steady state: a forward on each stage that has one left (unless it
    # runs ahead of the next stage), then micro-batch i's backwards.
    for i in range(1, m):
        want = [nxt[F][s] < m for s in range(p)]
        if hold_back:
            for s in range(p - 1):
                if want[s] and nxt[F][s] >= nxt[F][s + 1] + 2 and \
                        free[s] >= free[s + 1] + cost[F][s + 1] + \
                        cost[B][s + 1] + comm:
                    want[s] = False
        for s in range(p - 2, -1, -1):
            want[s] = want[s] and want[s + 1]
        for s in range(p):
            if not want[s]:
                continue
            if s > 0 and not ensure_forward(s - 1, nxt[F][s]):
                return None
            if not make_room(s, F):
                return None
            if s > 0:
                fill_until(s, end[(F, s - 1, nxt[F][s])] + comm)
            run(s, F)
        for s in range(p - 1, -1, -1):
            # A stage that holds no forward for this backward catches up.
            if not ensure_forward(s, nxt[B][s]):
                return None
            if not make_room(s, B):
                return None
            if s < p - 1:
                fill_until(s, end[(B, s + 1, nxt[B][s])] + comm)
            run(s, B)
    for s in range(p):
        while nxt[W][s] < m:
            run(s, W)
    return order


def async_makespan(pb, order):
    """The makespan of per-stage orders with async transfers, or None if
    they wait for each other forever."""
    p, comm, cost = pb["p"], pb["comm"], pb["cost"]
    end = {}
    pos, free = [0] * p, [0.0] * p
    left = sum(len(o) for o in order)
    while left:
        moved = False
        for s in range(p):
            while pos[s] < len(order[s]):
                phase, mb = order[s][pos[s]]
                if phase == F:
                    dep = 0.0 if s == 0 else end.get((F, s - 1, mb))
                    dep = None if dep is None else dep + (comm if s else 0)
                elif phase == B:
                    own = end.get((F, s, mb))
                    nb = 0.0 if s == p - 1 else end.get((B, s + 1, mb))
                    dep = None if own is None or nb is None else \
                        max(own, nb + (comm if s < p - 1 else 0))
                else:
                    dep = end.get((B, s, mb))
                if dep is None:
                    break
                free[s] = max(free[s], dep) + cost[phase][s]
                end[(phase, s, mb)] = free[s]
                pos[s] += 1
                left -= 1
                moved = True
        if not moved:
            return None
    return max(free)


def zb_greedy(pb):
    best = None
    for warm_bubble in (True, False):
        for hold_back in (True, False):
            for fill_always in (True, False):
                order = zb_greedy_variant(pb, warm_bubble, hold_back,
                                          fill_always)
                if order is None:
                    continue
                t = async_makespan(pb, order)
                if t is not None and (best is None or t < best[0]):
                    best = (t, order)
    return best and best[1]


def cp_list(pb):
    """The critical-path list schedule's per-stage orders, or None."""
    p, m, comm, cost = pb["p"], pb["m"], pb["comm"], pb["cost"]
    # Longest path from the start of an action to the end of the step.
    tail_b = [0.0] * p
    for s in range(p):
        chain = cost[B][s] + max(cost[W][s], 0.0)
        down = 0.0
        for q in range(s - 1, -1, -1):
            down += comm + cost[B][q]
            chain = max(chain, cost[B][s] + down + cost[W][q])
        tail_b[s] = chain
    tail_f = [0.0] * p
    for s in range(p - 1, -1, -1):
        after = tail_b[p - 1] if s == p - 1 else comm + tail_f[s + 1]
        tail_f[s] = cost[F][s] + (after if s < p - 1 else tail_b[s])
    prio = [tail_f, tail_b, [cost[W][s] for s in range(p)]]
    nxt = [[0] * p for _ in range(3)]
    end = {}
    free, mem = [0.0] * p, [0.0] * p
    order = [[] for _ in range(p)]

    def ready(phase, s):
        mb = nxt[phase][s]
        if mb >= m or (phase == W and mb >= nxt[B][s]):
            return None
        if phase == F:
            if mem[s] + pb["act"][s] > pb["cap"][s] + 1e-9:
                return None
            if s == 0:
                return 0.0
            t = end.get((F, s - 1, mb))
            return None if t is None else t + comm
        if phase == B:
            own = end.get((F, s, mb))
            if own is None:
                return None
            if s == p - 1:
                return own
            t = end.get((B, s + 1, mb))
            return None if t is None else max(own, t + comm)
        return end[(B, s, mb)]

    for _ in range(3 * p * m):
        # The rank that becomes free first with something to run runs the
        # most critical of its actions that can start by then.
        best = None
        for s in range(p):
            options = [(ph, ready(ph, s)) for ph in (F, B, W)]
            options = [(ph, t) for ph, t in options if t is not None]
            if not options:
                continue
            now = max(free[s], min(t for _, t in options))
            runnable = [ph for ph, t in options if t <= now + 1e-12]
            ph = max(runnable, key=lambda x: (prio[x][s], x == B))
            key = (now, -prio[ph][s])
            if best is None or key < best[0]:
                best = (key, s, ph, now)
        if best is None:
            return None
        _, s, ph, now = best
        mb = nxt[ph][s]
        free[s] = now + cost[ph][s]
        end[(ph, s, mb)] = free[s]
        mem[s] += delta(pb, ph, s)
        nxt[ph][s] += 1
        order[s].append((ph, mb))
    return order


# --- measuring with pp -----------------------------------------------------


def values(xs):
    return ",".join(repr(x) for x in xs)


def f64s(xs):
    return ", ".join(f"{x:.17e}" for x in xs)


def schedule_ir(pb, name, order):
    p = pb["p"]
    f, b, w = pb["cost"]
    cost = (f"#pp.cost<forward = [{f64s(f)}], backward_input = [{f64s(b)}], "
            f"backward_weight = [{f64s(w)}], comm = {pb['comm']:.17e} : f64, "
            f"activation = [{f64s(pb['act'])}], "
            f"stash = [{f64s(pb['stash'])}]>")
    lines = [f'module {{\n  pp.schedule @train_step_schedule "{name}" for '
             f'@train_step microbatches {pb["m"]} stage_rank '
             f'[{", ".join(str(s) for s in range(p))}] attributes {{cost = '
             f'{cost}, memory_cap = array<f64: {f64s(pb["cap"])}>}} {{']
    phases = ["forward", "backward_input", "backward_weight"]
    for s in range(p):
        lines.append(f"    pp.rank {s} {{")
        for ph, mb in order[s]:
            lines.append(f"      pp.compute {phases[ph]} stage {s} mb {mb}")
        lines.append("    }")
    lines.append("  }\n}\n")
    return "\n".join(lines)


def measure(pp_opt, semantics, source, schedule_options=None):
    """(makespan, peaks, stderr, seconds) of a module (or of pp-schedule's
    output with `schedule_options`), or None if pp rejects it."""
    args = [pp_opt, "-"]
    if schedule_options is not None:
        args.append("--pp-schedule=" + " ".join(schedule_options))
    args += [f"--pp-insert-transfers=semantics={semantics}",
             f"--pp-verify-schedule=semantics={semantics}",
             f"--pp-simulate=semantics={semantics}", "-o", "-"]
    start = time.perf_counter()
    proc = subprocess.run(args, input=source, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        return None
    makespan = parse_f64(MAKESPAN.search(proc.stdout).group(1))
    peaks = [parse_f64(x.strip()) for x in
             PEAK.search(proc.stdout).group(1).split(",")]
    return makespan, peaks, proc.stderr, seconds


def options(pb, name, split, semantics):
    return [f"schedule={name}", f"split-backward={int(split)}",
            f"semantics={semantics}", f"num-stages={pb['p']}",
            f"num-microbatches={pb['m']}",
            f"forward-cost={values(pb['cost'][F])}",
            f"backward-input-cost={values(pb['cost'][B])}",
            f"backward-weight-cost={values(pb['cost'][W])}",
            f"comm-cost={pb['comm']!r}",
            f"activation-memory={values(pb['act'])}",
            f"stash-memory={values(pb['stash'])}",
            f"memory-cap={values(pb['cap'])}"]


def builtin_names(pp_opt):
    names = schedules(pp_opt)
    # auto is measured, exact is auto's own search, pipedream-2bw trains
    # differently (a delayed update).
    return [n for n in names if n not in ("auto", "exact", "pipedream-2bw")]


def fits(pb, result):
    return result is not None and all(
        peak <= cap + 1e-9 for peak, cap in zip(result[1], pb["cap"]))


def run_problem(args, names, pb, orders):
    """Per semantics: auto's makespan and time, and each candidate's."""
    out = {}
    for semantics in args.semantics:
        auto = measure(args.pp_opt, semantics, "module {}\n",
                       options(pb, "auto", False, semantics))
        row = {"auto": auto and auto[0], "auto_s": auto and auto[3],
               "auto_fits": fits(pb, auto), "builtin": None}
        for name in names:
            for split in (False, True):
                got = measure(args.pp_opt, semantics, "module {}\n",
                              options(pb, name, split, semantics))
                if fits(pb, got) and (row["builtin"] is None or
                                      got[0] < row["builtin"][0]):
                    row["builtin"] = (got[0], name + (" (split)" if split
                                                      else ""))
        for ext, order in orders.items():
            got = None
            if order is not None:
                got = measure(args.pp_opt, semantics,
                              schedule_ir(pb, ext, order))
            row[ext] = got[0] if fits(pb, got) else None
        out[semantics] = row
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pp-opt", required=True)
    parser.add_argument("--problems", type=int, default=200)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--must-beat", default="builtin,zb-greedy,cp-list",
                        type=lambda s: s.split(","),
                        help="comparisons that fail the run when auto loses")
    parser.add_argument("--max-ranks", type=int, default=16,
                        help="at most this many ranks (a quicker run)")
    parser.add_argument("--semantics", default="async,rendezvous",
                        type=lambda s: s.split(","))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    problems = [make_problem(rng, args.max_ranks)
                for _ in range(args.problems)]
    names = builtin_names(args.pp_opt)
    externals = ("zb-greedy", "cp-list")
    orders = [{"zb-greedy": zb_greedy(pb), "cp-list": cp_list(pb)}
              for pb in problems]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda i: run_problem(args, names, problems[i],
                                                   orders[i]),
                             range(len(problems))))
    failed = False
    print(f"{len(problems)} problems, seed {args.seed}: p in "
          f"[4, {args.max_ranks}], "
          f"m in [p, 3p], comm up to 1x the mean F, per-rank caps")
    for semantics in args.semantics:
        print(f"\n{semantics} transfers")
        print("| auto vs | compared | wins | ties | losses | worst auto/other "
              "| best auto/other |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for other in ("builtin",) + externals + ("best",):
            wins = ties = losses = compared = 0
            worst, best = 0.0, float("inf")
            for pb, row in zip(problems, rows):
                r = row[semantics]
                cands = [r["builtin"] and r["builtin"][0]] + \
                    [r[e] for e in externals]
                value = {"builtin": cands[0], "zb-greedy": cands[1],
                         "cp-list": cands[2]}.get(other)
                if other == "best":
                    present = [c for c in cands if c is not None]
                    value = min(present) if present else None
                if value is None:
                    continue
                compared += 1
                a = r["auto"] if r["auto_fits"] else float("inf")
                ratio = a / value
                worst, best = max(worst, ratio), min(best, ratio)
                if a < value * (1 - REL):
                    wins += 1
                elif a <= value * (1 + REL):
                    ties += 1
                else:
                    losses += 1
                    failed |= other in args.must_beat
                    print(f"  auto loses to {other} on p={pb['p']} "
                          f"m={pb['m']}: {a:.6g} > {value:.6g}",
                          file=sys.stderr)
            print(f"| {other} | {compared} | {wins} | {ties} | {losses} | "
                  f"{worst:.4f} | {best:.4f} |")
        times = sorted(row[semantics]["auto_s"] or 0.0 for row in rows)
        print(f"auto's time per problem: median {times[len(times) // 2]:.2f} s,"
              f" max {times[-1]:.2f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
