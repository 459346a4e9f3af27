#!/usr/bin/env python3
"""No heap allocation on the hot path: a compiled 1-stage program makes as
many malloc calls in a 6-step run as in a 2-step run.

Each model is compiled with pp-compile and run under the malloc-counting
shim (no_allocation_shim.c, LD_PRELOAD) for --steps 2 and --steps 6. The
program passes if the counts are equal. As a control that the test can
fail, the same model compiled with --static-scratch=false (heap
temporaries) must allocate more in the longer run.
"""

import argparse
import os
import subprocess
import sys
import tempfile


def count_mallocs(program, shim, steps, extra, workdir):
    counts = os.path.join(workdir, f"count-{steps}")
    if os.path.exists(counts):
        os.remove(counts)
    env = dict(os.environ, LD_PRELOAD=shim, PP_MALLOC_COUNT_FILE=counts)
    subprocess.run([program, "--steps", str(steps)] + extra, env=env,
                   check=True, stdout=subprocess.DEVNULL, timeout=300)
    with open(counts) as f:
        lines = f.read().split("\n")
    # The program's own process wrote last (MPI helpers may write too).
    mine = [l for l in lines if l.strip()]
    return int(mine[-1].split()[1])


def per_step(args, model, flags, extra, workdir):
    program = os.path.join(workdir, "train")
    subprocess.run([args.pp_compile, model, "--stages", "1", "-o", program]
                   + flags, check=True, timeout=600)
    short = count_mallocs(program, args.shim, 2, extra, workdir)
    long = count_mallocs(program, args.shim, 6, extra, workdir)
    return short, long


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--shim", required=True)
    parser.add_argument("--model", action="append", required=True,
                        help="model.mlir[:corpus.txt] (repeatable)")
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as workdir:
        for spec in args.model:
            model, _, corpus = spec.partition(":")
            extra = ["--corpus", corpus] if corpus else []
            name = os.path.basename(model)
            short, long = per_step(args, model, [], extra, workdir)
            extra_per_step = (long - short) / 4
            print(f"{name}: {short} mallocs in 2 steps, {long} in 6 "
                  f"({extra_per_step:g} per extra step)")
            if short <= 0 or long != short:
                failed = True
            short, long = per_step(args, model, ["--static-scratch=false"],
                                   extra, workdir)
            print(f"{name} with heap temporaries (control): {short} in 2 "
                  f"steps, {long} in 6")
            if long <= short:
                print(f"{name}: the control allocates no more per step: the "
                      "shim does not count", file=sys.stderr)
                failed = True
    if failed:
        print("FAIL: a program allocates on the hot path", file=sys.stderr)
        return 1
    print("PASS: no allocation per step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
