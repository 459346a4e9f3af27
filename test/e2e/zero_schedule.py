#!/usr/bin/env python3
"""ZeRO-1 compiled into the schedule (pp-compile --zero 1): the program's
pp.reduce_scatter and pp.all_gather actions train the MLP (2 stages x 2
replicas, 1f1b, 8 micro-batches, 20 steps) to the weights and losses of
plain data parallelism, bit for bit, with SGD and Adam, and without a
run-time --zero; --zero 0 contradicts such a program and stops it with one
line. pp-simulate's static memory per rank (weights + gradients +
optimizer state) equals the bytes --print-memory prints on replica 0's
ranks, for plain data parallelism and for ZeRO-1, SGD and Adam."""

import argparse
import os
import sys
import tempfile

from zero_memory import losses, memory, run, simulated

REPLICAS = 2
RANKS = 2


def train(exe, workdir, name, extra):
    path = os.path.join(workdir, name + ".safetensors")
    out = run(["mpirun", "-np", str(RANKS * REPLICAS), exe, "--steps", "20",
               "--save", path, "--print-memory"] + extra).stdout
    with open(path, "rb") as f:
        return out, f.read()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--pp-opt", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        common = [args.model, "--stages", str(RANKS), "--microbatches", "8",
                  "--schedule", "1f1b", "--data-parallel", str(REPLICAS)]
        exes, schedules = {}, {}
        for zero in (0, 1):
            exes[zero] = os.path.join(workdir, f"zero{zero}")
            run([args.pp_compile] + common +
                ["--zero", str(zero), "-o", exes[zero]])
            schedules[zero] = os.path.join(workdir, f"zero{zero}.mlir")
            run([args.pp_compile] + common +
                ["--zero", str(zero), "--emit", "schedule", "-o",
                 schedules[zero]])
        with open(schedules[1]) as f:
            text = f.read()
        if "pp.reduce_scatter" not in text or "pp.all_gather" not in text or \
                "pp.all_reduce" in text:
            sys.exit("the --zero 1 schedule lacks its ZeRO-1 actions")
        for optimizer, lr in (("sgd", "0.1"), ("adam", "0.01")):
            flags = ["--optimizer", optimizer, "--lr", lr]
            plain, w_plain = train(exes[0], workdir, "plain", flags)
            zero, w_zero = train(exes[1], workdir, "zero", flags)
            if losses(plain) != losses(zero) or len(losses(plain)) != 20:
                sys.exit(f"{optimizer}: the losses differ\n{plain}\n{zero}")
            if w_plain != w_zero:
                sys.exit(f"{optimizer}: the saved weights differ")
            for level, out in ((0, plain), (1, zero)):
                measured = memory(out)
                model = simulated(args.pp_opt, schedules[level], optimizer)
                for rank in range(RANKS):
                    if measured.get(rank) != model.get(rank):
                        sys.exit(f"{optimizer}, zero {level}: rank {rank} "
                                 f"holds {measured.get(rank)} bytes, "
                                 f"pp-simulate says {model.get(rank)}")
                print(f"{optimizer}, zero {level}: weights, gradients, "
                      f"optimizer bytes per rank "
                      f"{[model[r] for r in range(RANKS)]} (simulated = "
                      f"measured)")
            print(f"{optimizer}: identical weights and losses")
        proc = run(["mpirun", "-np", str(RANKS * REPLICAS), exes[1],
                    "--steps", "1", "--zero", "0"], ok=False)
        want = "--zero 0 contradicts the program, compiled with --zero 1"
        if proc.returncode == 0 or want not in proc.stderr:
            sys.exit(f"--zero 0 on a ZeRO-1 program: expected '{want}'\n"
                     f"{proc.stdout}\n{proc.stderr}")
    print("zero_schedule: ok")


if __name__ == "__main__":
    main()
