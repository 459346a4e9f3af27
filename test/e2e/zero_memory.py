"""Shared by the ZeRO end-to-end tests: running a tool, and reading the
losses, the parameter sizes, the bytes per rank that --print-memory prints and the static memory
that pp-simulate reports."""

import math
import os
import re
import subprocess
import sys


def run(cmd, ok=True):
    """The finished process; a failure stops the test when ok is set."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if ok and proc.returncode != 0:
        sys.exit(f"FAILED ({proc.returncode}): {' '.join(cmd)}\n"
                 f"{proc.stdout}\n{proc.stderr}")
    return proc


def losses(out):
    return re.findall(r"^step \d+ loss \S+$", out, re.M)


def param_sizes(model_text):
    """Numbers of values of the model's pp.param arguments."""
    shapes = re.findall(r"tensor<([0-9x]+)xf32> \{pp\.param\}", model_text)
    return [math.prod(int(d) for d in s.split("x")) for s in shapes]


def memory(out, gathered=False):
    """{rank: (weights, gradients, optimizer)} from --print-memory; with
    gathered, the peak of gathered weights follows (0 when not printed)."""
    rows = re.findall(r"memory rank (\d+): weights (\d+) gradients (\d+) "
                      r"optimizer (\d+) bytes", out)
    peaks = dict(re.findall(r"gathered weights rank (\d+): peak (\d+) "
                            r"bytes", out))
    return {int(r): tuple(int(v) for v in vals) +
            ((int(peaks.get(r, 0)),) if gathered else ())
            for r, *vals in rows}


def simulated(pp_opt, schedule, optimizer, gathered=False):
    """{rank: (weights, gradients, optimizer)} from pp-simulate's remark;
    with gathered, the weights gathered for the step (or, gathered per
    param, the most whole at once) follow."""
    err = run([pp_opt, schedule, f"--pp-simulate=optimizer={optimizer}",
               "-o", os.devnull]).stderr
    rows = parse_static_memory(err, gathered)
    if rows is None:
        sys.exit(f"pp-simulate reported no static memory:\n{err}")
    return rows


def parse_static_memory(err, gathered=False):
    """The rows of pp-simulate's static memory remark in `err` (None when
    there is none); a rank's gathered bytes are those of its stages gathered
    for the step, per param, or both (a rank of each kind of stage).

    >>> head = ("remark: static memory per rank (weights + gradients + "
    ...         "optimizer state, bytes): ")
    >>> parse_static_memory(head + "rank 0: 3136 + 6272 + 0 (+ 6272 "
    ...     "gathered for the step); rank 1: 2440 + 4880 + 0 (+ 4096 "
    ...     "gathered at once, per param)", gathered=True)
    {0: (3136, 6272, 0, 6272), 1: (2440, 4880, 0, 4096)}
    >>> parse_static_memory(head + "rank 0: 80 + 160 + 0 (+ 128 gathered "
    ...     "for the step and at once, per param)", gathered=True)
    {0: (80, 160, 0, 128)}
    >>> parse_static_memory(head + "rank 0: 64 + 64 + 0; rank 1: 48 + 96 + 0")
    {0: (64, 64, 0), 1: (48, 96, 0)}
    >>> parse_static_memory("remark: makespan 7") is None
    True
    """
    line = re.search(r"static memory per rank \(weights \+ gradients \+ "
                     r"optimizer state, bytes\):(.*)", err)
    if not line:
        return None
    row = r"rank (\d+): (\d+) \+ (\d+) \+ (\d+)"
    if gathered:
        row += (r" \(\+ (\d+) gathered (?:for the step|at once, per param|"
                r"for the step and at once, per param)\)")
    rows = re.findall(row, line.group(1))
    return {int(r): tuple(int(v) for v in vals) for r, *vals in rows}
