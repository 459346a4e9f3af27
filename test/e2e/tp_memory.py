#!/usr/bin/env python3
"""Weights, gradients and optimizer state per process under tensor
parallelism, three ways: the bytes the runtime holds (--print-memory), the
closed form (4 bytes per f32 weight and as many for its gradient, Adam's
two f32 moments 8 more, 8 / d under ZeRO-1 with d replicas; a split weight
counts 1 / T of its values) and pp-simulate's static memory. The MLP on
2 pipeline ranks x T = 2, under Adam: without ZeRO (4 processes) and with
ZeRO-1 over 2 replicas (8 processes); or any model with further pp-compile
options (--compile-arg), weights that must be split (--expect-split) and
the (replicas, ZeRO stage) pairs to run (--configs)."""

import argparse
import os
import re
import sys
import tempfile

from zero_memory import memory as measured, run, simulated

RANKS = 2
TP = 2
F32 = 4


def global_params(model):
    """{param index: element count} of the training step's pp.param
    arguments (the index is the argument's, as in #pp.slot<param i>)."""
    with open(model) as f:
        text = f.read()
    signature = text[text.index("@train_step("):text.index(") ->")]
    params = {}
    for index, arg in enumerate(re.split(r",\s*(?=%)", signature)):
        shape = re.search(r"tensor<([\dx]+)xf32>", arg)
        if "pp.param" in arg and shape:
            numel = 1
            for dim in shape.group(1).split("x"):
                numel *= int(dim)
            params[index] = numel
    return params


def stage_params(schedule):
    """{param index: (stage, split)} from the stage functions' arguments."""
    with open(schedule) as f:
        text = f.read()
    placed = {}
    for func in re.finditer(r"func\.func @\w+\((.*?)\) -> .*?pp\.stage = "
                            r"(\d+)", text):
        args, stage = func.group(1), int(func.group(2))
        for arg in re.finditer(r"\{pp\.slot = #pp\.slot<param (\d+)>"
                               r"(, pp\.split = [^}]*)?\}", args):
            placed[int(arg.group(1))] = (stage, bool(arg.group(2)))
    return placed


def closed_form(params, placed, replicas, zero):
    """{pipeline rank: (weights, gradients, optimizer)} bytes."""
    ranks = {r: [0, 0, 0] for r in range(RANKS)}
    for index, numel in params.items():
        stage, split = placed[index]
        local = numel // TP if split else numel
        if split and numel % TP or zero and local % replicas:
            sys.exit(f"param {index}: {numel} values do not divide evenly")
        moments = local // replicas if zero else local
        ranks[stage][0] += F32 * local
        ranks[stage][1] += F32 * local
        ranks[stage][2] += 2 * F32 * moments
    return {r: tuple(v) for r, v in ranks.items()}


def check(args, workdir, replicas, zero):
    name = f"tp{TP}-pp{RANKS}-dp{replicas}-zero{zero}"
    common = [args.model, "--stages", str(RANKS), "--microbatches", "4",
              "--schedule", "1f1b", "--tensor-parallel", str(TP),
              "--data-parallel", str(replicas), "--zero", str(zero)
              ] + args.compile_arg
    exe = os.path.join(workdir, name)
    schedule = exe + ".mlir"
    run([args.pp_compile] + common + ["-o", exe])
    run([args.pp_compile] + common + ["--emit", "schedule", "-o", schedule])
    placed = stage_params(schedule)
    for index in args.expect_split:
        if not placed.get(index, (0, False))[1]:
            sys.exit(f"{name}: param {index} is not split")
    expected = closed_form(global_params(args.model), placed, replicas, zero)
    model = simulated(args.pp_opt, schedule, "adam")
    held = measured(run(["mpirun", "-np", str(TP * RANKS * replicas), exe,
                         "--steps", "1", "--optimizer", "adam",
                         "--print-memory"]).stdout)
    if len(held) != TP * RANKS * replicas:
        sys.exit(f"{name}: --print-memory printed {len(held)} ranks")
    for world, memory in sorted(held.items()):
        rank = world // TP % RANKS
        if memory != expected[rank] or model.get(rank) != expected[rank]:
            sys.exit(f"{name}: world rank {world} (pipeline rank {rank}) "
                     f"holds {memory} bytes, the closed form says "
                     f"{expected[rank]}, pp-simulate {model.get(rank)}")
    print(f"{name}: weights, gradients, Adam bytes per pipeline rank "
          f"{[expected[r] for r in range(RANKS)]} (held = closed form = "
          f"pp-simulate)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--pp-opt", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--compile-arg", action="append", default=[],
                        help="a further pp-compile option (repeatable)")
    parser.add_argument("--expect-split", type=int, action="append",
                        default=[], help="a param index that must be split")
    parser.add_argument("--configs", default="1:0,2:1",
                        help="replicas:zero pairs, comma-separated")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        for config in args.configs.split(","):
            replicas, zero = map(int, config.split(":"))
            check(args, workdir, replicas=replicas, zero=zero)
    print("tp_memory: ok")


if __name__ == "__main__":
    main()
