#!/usr/bin/env python3
"""Compares the built-in pipeline schedules under pp-simulate: makespan,
bubble and peak activation memory over a grid of ranks, micro-batches and
cost shapes, with the closed forms of docs/ClosedForms.md where they are exact.

Standard library only. Example:
  python3 bench/schedule_table.py --pp-opt build/bin/pp-opt \
      --pp-translate build/bin/pp-translate
"""

import argparse
import random
import re
import subprocess
import sys

RANKS = (4, 8)
MICROBATCHES = (8, 16, 32)
SEED = 2024
HETERO_COMM = 0.1

# Chunks per rank of the schedules we know how to set up. Multi-chunk
# schedules get num-stages = v * p on p ranks; every chunk carries 1/v of its
# stage's time and activation so all columns describe the same model and the
# numbers are in whole-stage units. Schedules pp-opt lists but this table does
# not know are tried with v = 1, then v = 2.
KNOWN_CHUNKS = {
    "gpipe": 1,
    "1f1b": 1,
    "zb-h1": 1,
    "zb-h2": 1,
    "interleaved-1f1b": 2,
    "looped-bfs": 2,
    "zbv": 2,
    "v-half": 2,
    "v-min": 2,
    "dualpipev": 2,
    "hanayo": 2,
    "interleaved-zb": 2,
}
ORDER = list(KNOWN_CHUNKS)

REMARK = re.compile(
    r"remark: makespan ([-+.\deE]+), bubble ([-+.\deE]+)% "
    r"\(idle per rank: ([^)]*)\), peak activation memory per rank: (.*)$",
    re.M)


def run(cmd, stdin=None):
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def first_error(stderr):
    for line in stderr.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    return stderr.strip().splitlines()[0] if stderr.strip() else "failed"


def available_schedules(pp_opt):
    """Names from the generator registry (its 'unknown schedule' diagnostic)
    and from the pass option's help text."""
    names = []
    _, _, err = run([pp_opt, "-", "--pp-schedule=schedule=__list__ "
                     "num-stages=2 num-microbatches=2", "-o", "/dev/null"],
                    stdin="module {}\n")
    m = re.search(r"expected one of: (.*)", err)
    if m:
        names += [n.strip() for n in m.group(1).split(",")]
    _, out, _ = run([pp_opt, "--help"])
    m = re.search(r"Schedule to generate: (.*)", out)
    if m:
        for n in re.split(r",\s*|\s+or\s+", m.group(1).strip()):
            if n and n not in names:
                names.append(n)
    return names


def cost_shapes():
    """Per-stage (F, B, W) lists and the transfer time, by shape and p."""
    shapes = {}
    shapes["uniform (F=B=W=1, comm 0)"] = {
        p: ([1.0] * p, [1.0] * p, [1.0] * p, 0.0) for p in RANKS}
    shapes["typical (F=1, B=2F, W=F, comm 0)"] = {
        p: ([1.0] * p, [2.0] * p, [1.0] * p, 0.0) for p in RANKS}
    hetero = {}
    for p in RANKS:
        rng = random.Random(SEED * 100 + p)
        f = [round(rng.uniform(0.5, 2.0), 2) for _ in range(p)]
        b = [round(rng.uniform(0.5, 2.0), 2) for _ in range(p)]
        w = [round(rng.uniform(0.5, 2.0), 2) for _ in range(p)]
        hetero[p] = (f, b, w, HETERO_COMM)
    shapes["heterogeneous (F,B,W uniform in [0.5,2] per stage, seed %d, "
           "comm %g)" % (SEED, HETERO_COMM)] = hetero
    return shapes


def cost_attr(f, b, w, comm, v):
    """#pp.cost with one entry per stage (per chunk when v > 1)."""
    def split(xs):
        return [x / v for x in xs for _ in range(v)]

    def arr(xs):
        return "[" + ", ".join(repr(float(x)) for x in xs) + "]"

    n = len(f) * v
    return ("#pp.cost<forward = %s, backward_input = %s, backward_weight = %s, "
            "comm = %r : f64, activation = %s, stash = %s>" %
            (arr(split(f)), arr(split(b)), arr(split(w)), float(comm),
             arr([1.0 / v] * n), arr([0.0] * n)))


def attach_cost(ir, attr):
    """Adds `attributes {cost = ...}` to the generated pp.schedule op."""
    lines = ir.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("pp.schedule "):
            if "attributes {" in line:
                line = line.replace("attributes {", "attributes {cost = %s, "
                                    % attr, 1)
            else:
                head, brace = line.rstrip()[:-1], "{"
                line = "%sattributes {cost = %s} %s" % (head, attr, brace)
            lines[i] = line
            return "\n".join(lines) + "\n"
    raise RuntimeError("no pp.schedule line in generated IR")


def simulate(pp_opt, name, p, m, v, costs):
    """(makespan, bubble %, max peak) or an error string."""
    f, b, w, comm = costs
    opt = "schedule=%s num-stages=%d num-ranks=%d num-microbatches=%d" % (
        name, p * v, p, m)
    rc, ir, err = run([pp_opt, "-", "--pp-schedule=" + opt], stdin="module {}\n")
    if rc:
        return first_error(err)
    ir = attach_cost(ir, cost_attr(f, b, w, comm, v))
    rc, _, err = run([pp_opt, "-", "--pp-insert-transfers=semantics=async",
                      "--pp-verify-schedule", "--pp-simulate", "-o",
                      "/dev/null"], stdin=ir)
    mt = REMARK.search(err)
    if rc or not mt:
        return first_error(err)
    peaks = [float(x) for x in mt.group(4).split(",")]
    return float(mt.group(1)), float(mt.group(2)), max(peaks)


def closed_forms(name, p, m, f, b, w):
    """(makespan or None, peak, peak is approximate) from docs/ClosedForms.md,
    equal stage times, no transfer time. Peaks are capped at m: no schedule
    holds more than every micro-batch of a stage."""
    fbw = f + b + w
    if name in ("gpipe", "1f1b"):
        return (m + p - 1) * fbw, min(m, m if name == "gpipe" else p), False
    if name == "zb-h1":
        return m * fbw + (p - 1) * (f + b - w), min(m, p), False
    if name == "interleaved-1f1b":
        return m * fbw + (p - 1) * fbw / 2, min(m, p + (p - 1) / 2), False
    if name == "dualpipev":
        # 2p + 1 chunks of half a stage (lit: schedule-dualpipev.mlir).
        return None, min(m, p + 0.5), False
    approx = {"zbv": p, "v-half": (p + 2) / 2, "v-min": (p + 4) / 3}
    if name in approx:
        return None, min(m, approx[name]), True
    return None


def fmt(x):
    return ("%.2f" % x).rstrip("0").rstrip(".")


def table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows)
              for i in range(len(header))]
    out = ["  ".join(str(h).rjust(wd) for h, wd in zip(header, widths))]
    out.append("  ".join("-" * wd for wd in widths))
    for r in rows:
        out.append("  ".join(str(c).rjust(wd) for c, wd in zip(r, widths)))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pp-opt", required=True)
    ap.add_argument("--pp-translate", required=True,
                    help="accepted for symmetry with compile_speed.py")
    args = ap.parse_args()

    available = available_schedules(args.pp_opt)
    schedules = [n for n in ORDER if n in available]
    schedules += [n for n in available if n not in KNOWN_CHUNKS]
    missing = [n for n in ORDER if n not in available]
    print("pp-opt: %s" % args.pp_opt)
    print("schedules: %s" % ", ".join(schedules))
    if missing:
        print("not in this pp-opt (skipped): %s" % ", ".join(missing))
    print("v = 2 schedules run 2p stages (chunks) on p ranks; a chunk has half "
          "its stage's F, B, W and activation,\nso every number below is in "
          "whole-stage units. Activation 1 per micro-batch of a stage, "
          "stash 0 (freed at B).\nPipeline: pp-schedule | attach #pp.cost | "
          "pp-insert-transfers, pp-verify-schedule, pp-simulate (async).")

    notes = []
    for shape, per_p in cost_shapes().items():
        exact = per_p[RANKS[0]][3] == 0.0 and all(
            len(set(x)) == 1 for x in per_p[RANKS[0]][:3])
        results = {}
        chunks = {}
        for p in RANKS:
            for m in MICROBATCHES:
                for name in schedules:
                    tries = ([KNOWN_CHUNKS[name]] if name in KNOWN_CHUNKS
                             else [1, 2])
                    for v in tries:
                        r = simulate(args.pp_opt, name, p, m, v, per_p[p])
                        if not isinstance(r, str):
                            break
                    chunks[name] = v
                    results[p, m, name] = r
                    if isinstance(r, str):
                        notes.append("%s p=%d m=%d: %s" % (name, p, m, r))

        print("\n== %s ==" % shape)
        if shape.startswith("heterogeneous"):
            for p in RANKS:
                f, b, w, _ = per_p[p]
                print("p=%d  F=%s\n      B=%s\n      W=%s" %
                      (p, [fmt(x) for x in f], [fmt(x) for x in b],
                       [fmt(x) for x in w]))
        header = ["p", "m"] + ["%s%s" % (n, " (v=2)" if chunks.get(n) == 2
                                         else "") for n in schedules]
        panels = [("makespan" + (" [closed form]" if exact else ""), 0),
                  ("bubble %", 1),
                  ("peak activation memory, max over ranks" +
                   (" [closed form, capped at m; ~ approximate]" if exact
                    else ""), 2)]
        for title, k in panels:
            rows = []
            for p in RANKS:
                for m in MICROBATCHES:
                    row = [p, m]
                    for name in schedules:
                        r = results[p, m, name]
                        if isinstance(r, str):
                            row.append("n/a")
                            continue
                        cell = fmt(r[k]) if k != 1 else "%.1f" % r[k]
                        f, b, w, _ = per_p[p]
                        cf = closed_forms(name, p, m, f[0], b[0], w[0])
                        if exact and cf and k == 0 and cf[0] is not None:
                            cell += " [%s]" % fmt(cf[0])
                        if exact and cf and k == 2:
                            cell += " [%s%s]" % ("~" if cf[2] else "",
                                                 fmt(cf[1]))
                        row.append(cell)
                    rows.append(row)
            print("\n%s\n%s" % (title, table(header, rows)))

    if notes:
        print("\nn/a cells:")
        for n in sorted(set(notes)):
            print("  " + n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
