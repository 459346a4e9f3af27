#!/usr/bin/env python3
"""Times each schedule pass of pp on a large problem (interleaved-1f1b, 128
stages as v = 2 chunks on 64 ranks) for a growing number of micro-batches, to
show that every step grows linearly with the size of the schedule.

Each step is its own pp-opt / pp-translate invocation on the previous step's
output file. A pass's own time is read from `--mlir-timing
--mlir-timing-display=list` (best of 3), so parsing and printing the IR are
not counted; they are reported separately. pp-translate has a single timer
for parse + export, so the export time is that timer minus pp-opt's parse time
of the same file.

Standard library only. Example:
  python3 bench/compile_speed.py --pp-opt build/bin/pp-opt \
      --pp-translate build/bin/pp-translate
"""

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time

RANKS = 64
CHUNKS = 2
MICROBATCHES = (128, 256, 512, 1024)
REPEATS = 3
SLOW_S = 1.0
# A step is flagged when its time at the largest m divided by the time at the
# smallest exceeds the size ratio by this factor (a fitted exponent of about
# 1.1 over m = 128..1024); timing noise on a busy 2-core machine is ~10%.
SUPERLINEAR = 1.25

TIMER = re.compile(r"^\s*([\d.]+) \(\s*[\d.]+%\)\s+(.*?)\s*$", re.M)


def timed(cmd):
    """Runs cmd; returns (wall s, cpu s, {timer name: s}, stderr)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), err[-2000:]))
    report = err[err.find("Execution time report"):] if "Execution time" \
        in err else ""
    timers = {name: float(t) for t, name in TIMER.findall(report)}
    return wall, usage.ru_utime + usage.ru_stime, timers


def best(cmd, timer):
    """Best of REPEATS: (timer s, wall s, cpu s, all timers of that run)."""
    runs = []
    for _ in range(REPEATS):
        wall, cpu, timers = timed(cmd)
        if timer not in timers:
            raise RuntimeError("no timer %r in %s" % (timer, sorted(timers)))
        runs.append((timers[timer], wall, cpu, timers))
    return (min(r[0] for r in runs), min(r[1] for r in runs),
            min(r[2] for r in runs), min(runs, key=lambda r: r[0])[3])


def export_timer(pp_translate, path):
    _, _, timers = timed([pp_translate, "--pp-schedule-to-json", path, "-o",
                          os.devnull, "--mlir-timing",
                          "--mlir-timing-display=list"])
    for name in timers:
        if name.startswith("Export"):
            return name
    raise RuntimeError("no export timer in %s" % sorted(timers))


def fmt_row(cells, widths):
    return "  ".join(str(c).rjust(w) for c, w in zip(cells, widths))


def table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows)
              for i in range(len(header))]
    lines = [fmt_row(header, widths), fmt_row(["-" * w for w in widths],
                                              widths)]
    lines += [fmt_row(r, widths) for r in rows]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pp-opt", required=True)
    ap.add_argument("--pp-translate", required=True)
    ap.add_argument("--microbatches", type=int, nargs="+",
                    default=list(MICROBATCHES))
    ap.add_argument("--keep", help="directory for the intermediate files "
                    "(default: a temporary directory)")
    args = ap.parse_args()
    timing = ["--mlir-timing", "--mlir-timing-display=list"]
    stages = RANKS * CHUNKS
    steps = ["generate", "insert-transfers", "verify", "simulate",
             "export-json"]

    workdir = args.keep or tempfile.mkdtemp(prefix="pp-bench-")
    os.makedirs(workdir, exist_ok=True)
    empty = os.path.join(workdir, "empty.mlir")
    with open(empty, "w") as f:
        f.write("module {}\n")

    print("interleaved-1f1b, %d stages (v = %d chunks) on %d ranks, unit costs;"
          " best of %d; seconds" % (stages, CHUNKS, RANKS, REPEATS))
    print("load average at start: %.2f %.2f %.2f (%d CPUs)"
          % (os.getloadavg() + (os.cpu_count(),)))
    pass_s, wall_s, cpu_s, io_s, sizes = {}, {}, {}, {}, {}
    translate_s = {}
    for m in args.microbatches:
        files = [os.path.join(workdir, "m%d-%s.mlir" % (m, s))
                 for s in ("gen", "xfer", "verified", "simulated")]
        passes = [
            ("generate", empty, files[0], "PPSchedule",
             "--pp-schedule=schedule=interleaved-1f1b num-stages=%d "
             "num-ranks=%d num-microbatches=%d" % (stages, RANKS, m)),
            ("insert-transfers", files[0], files[1], "PPInsertTransfers",
             "--pp-insert-transfers"),
            ("verify", files[1], files[2], "PPVerifySchedule",
             "--pp-verify-schedule"),
            ("simulate", files[2], files[3], "PPSimulate", "--pp-simulate"),
        ]
        for step, src, dst, timer, flag in passes:
            t, wall, cpu, timers = best(
                [args.pp_opt, src, flag, "-o", dst] + timing, timer)
            pass_s[m, step], wall_s[m, step], cpu_s[m, step] = t, wall, cpu
            io_s[m, step] = (timers.get("Parser", 0.0),
                             timers.get("Output", 0.0))
        # Export: pp-translate times parse + export as one; alternate it with
        # a parse-only pp-opt run of the same file so both see the same load.
        last = files[3]
        name = export_timer(args.pp_translate, last)
        json_path = os.path.join(workdir, "m%d.json" % m)
        exports, parses = [], []
        for _ in range(REPEATS):
            wall, cpu, timers = timed([args.pp_translate,
                                       "--pp-schedule-to-json", last, "-o",
                                       json_path] + timing)
            exports.append((timers[name], wall, cpu))
            _, _, timers = timed([args.pp_opt, last, "-o", os.devnull] +
                                 timing)
            parses.append(timers["Parser"])
        translate, parse = min(e[0] for e in exports), min(parses)
        pass_s[m, "export-json"] = max(translate - parse, 0.0)
        wall_s[m, "export-json"] = min(e[1] for e in exports)
        cpu_s[m, "export-json"] = min(e[2] for e in exports)
        io_s[m, "export-json"] = (parse, 0.0)
        translate_s[m] = translate
        with open(files[1]) as f:
            ops = sum(1 for line in f if line.lstrip().startswith(
                ("pp.compute", "pp.send", "pp.recv")))
        sizes[m] = (ops, os.path.getsize(files[1]),
                    os.path.getsize(os.path.join(workdir, "m%d.json" % m)))
        print("  m=%d done" % m, file=sys.stderr)

    ms = args.microbatches
    m0 = ms[0]

    print("\nsize of the schedule after insert-transfers")
    print(table(["m", "actions", "MLIR bytes", "JSON bytes"],
                [[m, sizes[m][0], sizes[m][1], sizes[m][2]] for m in ms]))

    print("\npass time (s, from --mlir-timing; export = translate timer - "
          "parse)")
    print(table(["m"] + steps + ["total"],
                [[m] + ["%.4f" % pass_s[m, s] for s in steps] +
                 ["%.4f" % sum(pass_s[m, s] for s in steps)] for m in ms]))

    print("\nratio to m=%d (linear growth: m/%d); last row: exponent k of a "
          "fit t ~ m^k between the smallest and largest m" % (m0, m0))
    rows = [[m, "%.0f" % (m / m0)] +
            ["%.2f" % (pass_s[m, s] / pass_s[m0, s])
             if pass_s[m0, s] > 0 else "-" for s in steps] for m in ms]
    if len(ms) > 1:
        rows.append(["k", ""] + [
            "%.2f" % (math.log(pass_s[ms[-1], s] / pass_s[m0, s]) /
                      math.log(ms[-1] / m0))
            if pass_s[m0, s] > 0 and pass_s[ms[-1], s] > 0 else "-"
            for s in steps])
    print(table(["m", "m/%d" % m0] + steps, rows))

    print("\nexport-json: pp-translate timer (parse + export + write) and "
          "pp-opt parse of the same file (s)")
    print(table(["m", "translate", "parse", "export"],
                [[m, "%.4f" % translate_s[m], "%.4f" % io_s[m, "export-json"][0],
                  "%.4f" % pass_s[m, "export-json"]] for m in ms]))

    print("\nparse / print of the IR around each step (s, pp-opt timers "
          "Parser / Output)")
    print(table(["m"] + steps,
                [[m] + ["%.3f / %.3f" % io_s[m, s] for s in steps]
                 for m in ms]))

    print("\nwhole invocation, wall / cpu (s), parse + pass + print")
    print(table(["m"] + steps,
                [[m] + ["%.2f / %.2f" % (wall_s[m, s], cpu_s[m, s])
                        for s in steps] for m in ms]))

    print("\nload average at end: %.2f %.2f %.2f" % os.getloadavg())

    mlast = ms[-1]
    flags = []
    for s in steps:
        if pass_s[mlast, s] > SLOW_S:
            flags.append("SLOW: %s takes %.2f s at m=%d (> %g s)"
                         % (s, pass_s[mlast, s], mlast, SLOW_S))
        if pass_s[m0, s] > 0:
            growth = pass_s[mlast, s] / pass_s[m0, s]
            if growth > SUPERLINEAR * mlast / m0:
                flags.append("SUPERLINEAR: %s grows %.1fx from m=%d to m=%d "
                             "(linear: %.0fx)" % (s, growth, m0, mlast,
                                                  mlast / m0))
        if wall_s[mlast, s] > SLOW_S:
            flags.append("note: the whole %s invocation takes %.2f s wall at "
                         "m=%d (parse + print included)"
                         % (s, wall_s[mlast, s], mlast))
    print("\nflags (pass over %g s at m=%d, or growth over %gx linear):"
          % (SLOW_S, mlast, SUPERLINEAR))
    print("\n".join("  " + f for f in flags) if flags else "  none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
