#!/usr/bin/env python3
"""Times pp-compile end to end on the example models and prints one row per
model/configuration with the phase breakdown.

Each configuration is compiled to an executable with `--mlir-timing
--mlir-timing-display=tree`. The columns are the wall and CPU (user + sys)
time of the whole invocation, and from the timing tree: MLIR (parse, passes,
translation to LLVM IR, module split), the parallel LLVM backend (wall), its
summed LLVM optimisation and code generation over all parts, the largest
part (the backend's critical path on an idle machine: its optimisation plus
code generation), and the link. On a loaded machine wall times include
waiting for a core; CPU time does not. So the last column estimates the
wall time on an idle machine with a core per thread: the CPU time times
the share of the timers on the critical path, (mlir + largest + link) /
(mlir + llvm-opt + codegen + link), which holds while the load is steady.

Standard library only. Example:
  python3 bench/pp_compile_time.py --pp-compile build/bin/pp-compile
  python3 bench/pp_compile_time.py --pp-compile build/bin/pp-compile \\
      --configs gpt-1 gpt-1-vec --extra=--jobs=1
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPT = os.path.join(ROOT, "examples", "gpt", "gpt.mlir")
GPT_BENCH = os.path.join(ROOT, "examples", "gpt", "gpt-bench.mlir")
MLP = os.path.join(ROOT, "examples", "mlp", "mlp.mlir")
VEC = ["--vectorize-contractions"]
# name: (model, flags). The GPT ones are the e2e oracles' builds
# (CMakeLists.txt, test/e2e/compare_losses.py).
CONFIGS = {
    "gpt-1": (GPT, ["--stages", "1"]),
    "gpt-1-vec": (GPT, ["--stages", "1"] + VEC),
    "gpt-4": (GPT, ["--stages", "4", "--microbatches", "8",
                    "--schedule", "1f1b"]),
    "gpt-4-vec": (GPT, ["--stages", "4", "--microbatches", "8",
                        "--schedule", "1f1b"] + VEC),
    "mlp-dualpipev": (MLP, ["--stages", "8", "--ranks", "4",
                            "--microbatches", "16", "--schedule",
                            "dualpipev"]),
    "mlp-dualpipev-vec": (MLP, ["--stages", "8", "--ranks", "4",
                                "--microbatches", "16", "--schedule",
                                "dualpipev"] + VEC),
    "gpt-bench-4": (GPT_BENCH, ["--stages", "4", "--microbatches", "8",
                                "--schedule", "1f1b"]),
    "gpt-bench-1": (GPT_BENCH, ["--stages", "1"]),
}
DEFAULT = ["gpt-1", "gpt-1-vec", "gpt-4", "gpt-4-vec", "mlp-dualpipev",
           "gpt-bench-4"]

# "  user (pct)  wall (pct)  <indent>name" in the tree display; the user
# column is absent when MLIR times one thread.
LINE = re.compile(r"^(?:\s*[\d.]+ \(\s*[\d.]+%\))?\s*([\d.]+) \(\s*[\d.]+%\)"
                  r"( *)(\S.*?)\s*$")
BACKEND = "LLVM backend (parallel)"


def parse_tree(report):
    """[(depth, name, wall s)] of a --mlir-timing-display=tree report."""
    rows = []
    body = report[report.find("----Name----"):].splitlines()[1:]
    indents = sorted({len(m.group(2)) for m in map(LINE.match, body) if m})
    for line in body:
        m = LINE.match(line)
        if m:
            rows.append((indents.index(len(m.group(2))), m.group(3),
                         float(m.group(1))))
    return rows


def phases(rows):
    """Phase times (s) from the timing tree."""
    top = [(name, t) for depth, name, t in rows if depth == 0]
    total = dict(top).get("Total", 0.0)
    # A pp-compile without parts times optimisation and code generation at
    # the top level.
    serial = ("LLVM optimisation", "Code generation")
    out = {"mlir": sum(t for name, t in top if name not in
                       (BACKEND, "Link", "Total", "Rest") + serial)}
    out["backend"] = dict(top).get(BACKEND, 0.0)
    out["link"] = dict(top).get("Link", 0.0)
    parts, current = [], None
    for depth, name, t in rows:
        if depth == 1 and name.endswith("instructions)"):
            current = [name, 0.0, 0.0]
            parts.append(current)
        elif depth == 2 and current is not None:
            current[1 if name == "LLVM optimisation" else 2] += t
        elif depth <= 1:
            current = None
    if not parts:
        parts = [["whole module", dict(top).get(serial[0], 0.0),
                  dict(top).get(serial[1], 0.0)]]
        out["backend"] = parts[0][1] + parts[0][2]
    out["opt"] = sum(p[1] for p in parts)
    out["codegen"] = sum(p[2] for p in parts)
    largest = max(parts, key=lambda p: p[1] + p[2]) if parts else ["", 0, 0]
    out["largest"] = largest[1] + largest[2]
    out["parts"] = len(parts)
    out["total"] = total
    return out


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def idle_estimate(r):
    """Wall time (s) on an idle machine with a core per backend thread."""
    timed = r["mlir"] + r["opt"] + r["codegen"] + r["link"]
    critical = r["mlir"] + r["largest"] + r["link"]
    return r["cpu"] * critical / timed if timed else r["wall"]


def compile_once(pp_compile, model, flags, out, timeout):
    """Phase times of one compile; raises TimeoutExpired after `timeout`."""
    cmd = [pp_compile, model] + flags + ["-o", out, "--mlir-timing",
                                         "--mlir-timing-display=tree"]
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    wall = time.perf_counter() - start
    if proc.returncode:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), err[-2000:]))
    result = phases(parse_tree(err))
    result["wall"] = wall
    result["cpu"] = children_cpu() - cpu
    return result


def table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows)
              for i in range(len(header))]
    fmt = lambda cells: "  ".join(str(c).rjust(w)
                                  for c, w in zip(cells, widths))
    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] +
                     [fmt(r) for r in rows])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pp-compile", required=True)
    ap.add_argument("--configs", nargs="+", default=DEFAULT,
                    choices=sorted(CONFIGS))
    ap.add_argument("--repeats", type=int, default=1,
                    help="compiles per configuration; the row is the one "
                    "with the least CPU time")
    ap.add_argument("--extra", action="append", default=[],
                    help="a further pp-compile flag for every build "
                    "(repeatable), e.g. --extra=--jobs=1")
    ap.add_argument("--timeout", type=float, default=900,
                    help="seconds per compile before the row reads "
                    "'timeout'")
    args = ap.parse_args()
    print("pp-compile %s; %d CPUs; load average at start %.2f %.2f %.2f"
          % (" ".join(args.extra) or "(defaults)", os.cpu_count(),
             *os.getloadavg()))
    header = ["config", "wall", "cpu", "mlir", "backend", "llvm-opt",
              "codegen", "largest", "parts", "link", "idle-est"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="pp-compile-time-") as tmp:
        for name in args.configs:
            model, flags = CONFIGS[name]
            runs = []
            for _ in range(args.repeats):
                try:
                    r = compile_once(args.pp_compile, model,
                                     flags + args.extra,
                                     os.path.join(tmp, name), args.timeout)
                except subprocess.TimeoutExpired:
                    runs = None
                    break
                runs.append(r)
            print("  %s: %s" % (name, " ".join(
                [os.path.relpath(model, ROOT)] + flags + args.extra)),
                file=sys.stderr)
            if not runs:
                rows.append([name, "timeout"] + [""] * (len(header) - 2))
                continue
            r = min(runs, key=lambda r: r["cpu"])
            rows.append([name] + ["%.1f" % r[k] for k in
                                  ("wall", "cpu", "mlir", "backend", "opt",
                                   "codegen", "largest")] +
                        [r["parts"], "%.1f" % r["link"],
                         "%.1f" % idle_estimate(r)])
    print(table(header, rows))
    print("seconds; llvm-opt and codegen summed over the parts; largest: "
          "optimisation + code generation of the largest part; idle-est: "
          "cpu x (mlir + largest + link) / (mlir + llvm-opt + codegen + "
          "link)")
    print("load average at end: %.2f %.2f %.2f" % os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())
