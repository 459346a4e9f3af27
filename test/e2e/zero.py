#!/usr/bin/env python3
"""ZeRO-1 (--zero 1) against plain data parallelism: the same final
weights, bit for bit, and the same per-step losses. With SGD and Adam:
the MLP as 2 stages x 2 replicas (4 processes), and, with every layer 33
wide so that most weights and biases have an odd number of values (the
blocks are padded), as 1 stage x 2 replicas. With Adam only:
interleaved-1f1b with 2 stages per rank, and the no-flush pipedream-2bw
with its two weight versions. With 2 replicas each sum is a + b in both
collectives, so the results agree exactly. --print-memory's
optimizer-state bytes per rank match the closed form: Adam keeps 8 bytes
per weight on every replica without ZeRO, and 8 per weight of the
replica's block, ceil(n / d) or the rest, with ZeRO-1. The 2 x 2 Adam run
is repeated through the host-staged transport. With Adam, a checkpoint
written under ZeRO-1 after 10 steps is byte-equal to plain data
parallelism's, and resuming from it under ZeRO-1 gives the weights of 20
plain steps."""

import argparse
import math
import os
import re
import sys
import tempfile

from weights import run
from zero_memory import losses, memory, param_sizes

REPLICAS = 2


def train(exe, procs, workdir, name, extra):
    path = os.path.join(workdir, name + ".safetensors")
    # A later --steps wins.
    out = run(["mpirun", "-np", str(procs), exe, "--steps", "20", "--save",
               path, "--print-memory"] + extra)
    with open(path, "rb") as f:
        return out, f.read()


def checkpoint(exe, procs, workdir, name, extra):
    """The checkpoint file of a 10-step run."""
    ckpt = os.path.join(workdir, name)
    run(["mpirun", "-np", str(procs), exe, "--steps", "10", "--checkpoint",
         ckpt] + extra)
    with open(os.path.join(ckpt, "checkpoint.safetensors"), "rb") as f:
        return ckpt, f.read()


def check_checkpoint(exe, procs, workdir, tag, optimizer, w_plain):
    """A checkpoint written under ZeRO-1 holds the whole moments, the
    bytes of plain data parallelism's, and 10 more steps resumed from it
    under ZeRO-1 give the weights of 20 uninterrupted plain steps."""
    ckpt, zero = checkpoint(exe, procs, workdir, "ckpt-zero",
                            optimizer + ["--zero", "1"])
    _, plain = checkpoint(exe, procs, workdir, "ckpt-plain", optimizer)
    if zero != plain:
        sys.exit(f"{tag}: the ZeRO-1 checkpoint differs from the plain one")
    _, resumed = train(exe, procs, workdir, "resumed",
                       optimizer + ["--zero", "1", "--resume", ckpt,
                                    "--steps", "10"])
    if resumed != w_plain:
        sys.exit(f"{tag}: resumed under ZeRO-1, the weights differ")


def check(exe, procs, workdir, label, sizes, staged=False):
    for optimizer in (["--optimizer", "sgd", "--lr", "0.1"],
                      ["--optimizer", "adam", "--lr", "0.01"]):
        tag = f"{label} {optimizer[1]}"
        plain, w_plain = train(exe, procs, workdir, "plain", optimizer)
        zero, w_zero = train(exe, procs, workdir, "zero",
                             optimizer + ["--zero", "1"])
        if losses(plain) != losses(zero) or len(losses(plain)) != 20:
            sys.exit(f"{tag}: the losses differ\nplain:\n{plain}\nzero:\n{zero}")
        if w_plain != w_zero:
            sys.exit(f"{tag}: the saved weights differ")
        if staged and optimizer[1] == "adam":
            # Through host staging buffers (the transport GPUs use without
            # NCCL).
            _, w_staged = train(exe, procs, workdir, "staged",
                                optimizer + ["--zero", "1", "--backend",
                                             "guarded-staged"])
            if w_staged != w_plain:
                sys.exit(f"{tag}: the weights differ through staging buffers")
        if optimizer[1] == "adam":
            check_checkpoint(exe, procs, workdir, tag, optimizer, w_plain)
        mem_plain, mem_zero = memory(plain), memory(zero)
        if len(mem_plain) != procs or len(mem_zero) != procs:
            sys.exit(f"{tag}: expected {procs} memory lines\n{plain}\n{zero}")
        for rank in range(procs):
            weights = mem_plain[rank][0]
            want = 2 * weights if optimizer[1] == "adam" else 0
            if mem_plain[rank][2] != want:
                sys.exit(f"{tag}: rank {rank} keeps {mem_plain[rank][2]} "
                         f"bytes of optimizer state without ZeRO, not {want}")
            if sizes and optimizer[1] == "adam":
                replica = rank  # one stage: world rank = replica
                want = sum(8 * max(0, min(math.ceil(n / REPLICAS),
                                          n - replica * math.ceil(n / REPLICAS)))
                           for n in sizes)
            else:
                want //= REPLICAS
            if mem_zero[rank][2] != want:
                sys.exit(f"{tag}: rank {rank} keeps {mem_zero[rank][2]} bytes "
                         f"of optimizer state with ZeRO-1, not {want}")
        print(f"{tag}: identical weights; optimizer bytes per rank "
              f"{[mem_plain[r][2] for r in range(procs)]} -> "
              f"{[mem_zero[r][2] for r in range(procs)]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    with open(args.model) as f:
        text = f.read()
    odd = re.sub(r"(?<=[<x])32(?=x)", "33", text)
    sizes = param_sizes(odd)
    if sum(n % REPLICAS for n in sizes) == 0:
        sys.exit("the widened model has no odd-sized param")
    with tempfile.TemporaryDirectory() as workdir:
        odd_path = os.path.join(workdir, "odd.mlir")
        with open(odd_path, "w") as f:
            f.write(odd)
        exe = os.path.join(workdir, "mlp_2x2")
        run([args.pp_compile, args.model, "--stages", "2", "--microbatches",
             "8", "--schedule", "1f1b", "--data-parallel", str(REPLICAS),
             "-o", exe])
        check(exe, 2 * REPLICAS, workdir, "2 stages x 2 replicas", None,
              staged=True)
        # Two stages per rank, and a no-flush schedule with two weight
        # versions: Adam only, 10 steps.
        for schedule, stages in (("interleaved-1f1b", 4),
                                 ("pipedream-2bw", 2)):
            exe = os.path.join(workdir, schedule)
            run([args.pp_compile, args.model, "--stages", str(stages),
                 "--ranks", "2", "--microbatches", "8", "--schedule",
                 schedule, "--data-parallel", str(REPLICAS), "-o", exe])
            adam = ["--optimizer", "adam", "--lr", "0.01", "--steps", "10"]
            plain, w_plain = train(exe, 2 * REPLICAS, workdir, "plain", adam)
            zero, w_zero = train(exe, 2 * REPLICAS, workdir, "zero",
                                 adam + ["--zero", "1"])
            if w_plain != w_zero or losses(plain) != losses(zero):
                sys.exit(f"{schedule} adam: ZeRO-1 differs\n{plain}\n{zero}")
            print(f"{schedule} adam: identical weights")
        exe = os.path.join(workdir, "odd_1x2")
        run([args.pp_compile, odd_path, "--stages", "1", "--microbatches",
             "4", "--schedule", "gpipe", "--data-parallel", str(REPLICAS),
             "-o", exe])
        check(exe, REPLICAS, workdir, "odd sizes, 1 stage x 2 replicas", sizes)
    print("zero: ok")


if __name__ == "__main__":
    main()
