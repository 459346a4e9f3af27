#!/usr/bin/env python3
"""Checks that a pp schedule runs exactly PyTorch's compute actions, in
PyTorch's order, on every rank.

For every compute-only dump PREFIX-p<P>-m<M>-v<V>.csv (Inputs/pytorch/
generate.py writes them), imports it with pp-translate --import-pytorch-csv
and generates SCHEDULE with pp-opt --pp-schedule for the same ranks P,
micro-batches M and stages P * V, and compares the pp.compute actions of each
rank. A difference prints the first action that differs; any difference or
failure makes the script fail.

Usage: check_pytorch_order.py PP_OPT PP_TRANSLATE SCHEDULE PREFIX
"""

import argparse
import glob
import re
import subprocess
import sys

DUMP = re.compile(r"-p(\d+)-m(\d+)-v(\d+)\.csv$")
RANK = re.compile(r"^\s*pp\.rank (\d+)")
COMPUTE = re.compile(r"^\s*pp\.compute (.*?)\s*$")


def actions_per_rank(ir):
    """The compute actions of each rank, in order."""
    ranks, current = {}, None
    for line in ir.splitlines():
        if match := RANK.match(line):
            current = ranks.setdefault(int(match.group(1)), [])
        elif (match := COMPUTE.match(line)) and current is not None:
            current.append(match.group(1))
    return ranks


def run(command, source=None):
    out = subprocess.run(command, input=source, capture_output=True, text=True)
    if out.returncode != 0:
        first = next((l for l in out.stderr.splitlines() if "error:" in l),
                     out.stderr.strip())
        raise RuntimeError(first)
    return out.stdout


def first_difference(torch, pp):
    """None, or where the two schedules first differ."""
    for rank in sorted(set(torch) | set(pp)):
        mine, theirs = pp.get(rank, []), torch.get(rank, [])
        for i in range(max(len(mine), len(theirs))):
            a = theirs[i] if i < len(theirs) else "nothing"
            b = mine[i] if i < len(mine) else "nothing"
            if a != b:
                return "rank %d action %d: PyTorch %s, pp %s" % (rank, i, a, b)
    return None


def check(args, path, p, m, v):
    torch = actions_per_rank(run([args.pp_translate, "--import-pytorch-csv",
                                  path]))
    options = ("schedule=%s num-stages=%d num-ranks=%d num-microbatches=%d" %
               (args.schedule, p * v, p, m))
    pp = actions_per_rank(run([args.pp_opt, "--pp-schedule=" + options],
                              "module {}\n"))
    difference = first_difference(torch, pp)
    if difference:
        return difference
    return "same order, %d actions on %d ranks" % (
        sum(map(len, pp.values())), len(pp))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pp_opt")
    parser.add_argument("pp_translate")
    parser.add_argument("schedule")
    parser.add_argument("prefix")
    args = parser.parse_args()
    dumps = sorted((tuple(map(int, DUMP.search(path).groups())), path)
                   for path in glob.glob(args.prefix + "-p*-m*-v*.csv")
                   if DUMP.search(path))
    failed = 0
    for (p, m, v), path in dumps:
        try:
            verdict = check(args, path, p, m, v)
        except RuntimeError as error:
            verdict = str(error)
        ok = verdict.startswith("same order")
        failed += not ok
        print("p%d-m%d-v%d: %s%s" % (p, m, v, "" if ok else "FAIL ", verdict))
    print("%d dumps, %d differ" % (len(dumps), failed))
    return 1 if failed or not dumps else 0


if __name__ == "__main__":
    sys.exit(main())
