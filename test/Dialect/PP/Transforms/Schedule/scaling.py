#!/usr/bin/env python3
"""Fails if scheduling, transfers, simulation, printing or stage planning
grow faster than they should. Times are CPU seconds of the tool (user +
system, which other jobs on a loaded machine do not inflate), less those
of an empty run; sizes 4x apart must cost less than 10x (linear costs 4x,
quadratic 16x), and the planner, cubic in stages when each stage holds
two ops, must plan 384 stages within a budget it met 4x over."""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile


def cpu_seconds(command):
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(command)} failed")
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pp-opt", required=True)
    parser.add_argument("--bench", required=True,
                        help="pp's bench/ (for its chain model)")
    parser.add_argument("--planning-budget", type=float, default=8,
                        help="CPU seconds planning 384 stages may take")
    args = parser.parse_args()
    sys.path.insert(0, args.bench)
    from count_limits import write_chain

    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        empty = pathlib.Path(tmp) / "empty.mlir"
        empty.write_text("module {}\n")
        out = os.path.join(tmp, "out.mlir")
        passes = ["--pp-insert-transfers", "--pp-simulate", "-o", out]
        base = cpu_seconds([args.pp_opt, str(empty), "-o", out])

        def schedule(options):
            return max(cpu_seconds([args.pp_opt, str(empty),
                                    f"--pp-schedule={options}"] + passes) -
                       base, 1e-3)

        for what, small, large in [
                ("stages", "num-stages=4096", "num-stages=16384"),
                ("micro-batches", "num-stages=2 num-microbatches=4096",
                 "num-stages=2 num-microbatches=16384")]:
            a, b = schedule(small), schedule(large)
            ratio = b / a
            print(f"{what}: {a:.2f} s, 4x as many {b:.2f} s ({ratio:.1f}x)")
            if ratio >= 10:
                print(f"error: 4x the {what} cost {ratio:.1f}x")
                failed = True

        chain = os.path.join(tmp, "chain.mlir")
        write_chain(chain, 384)
        planned = cpu_seconds([args.pp_opt, chain,
                               "--pp-partition-stages=num-stages=384",
                               "-o", out]) - base
        print(f"planning 384 stages: {planned:.2f} s")
        if planned >= args.planning_budget:
            print(f"error: planning 384 stages took {planned:.1f} s of CPU")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
