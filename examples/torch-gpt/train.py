#!/usr/bin/env python3
"""Trains examples/torch-gpt's GPT (model.py) with pp and with a plain
PyTorch loop from the same initial weights and token data, and prints
both losses per step, pp's step time and tokens/s (README.md). With
`--devices N` pp's layout planner chooses pipeline ranks, tensor-parallel
size and replicas for N processes; the script prints the layout and the
schedule's timeline before training. It exits 1 if a step's loss differs
from PyTorch's by more than --rtol.

  python examples/torch-gpt/train.py [--steps 20] [--out DIR]
  python examples/torch-gpt/train.py --devices 4 --memory-cap 4e6 --schedule auto

Needs torch, torch_mlir and pp's Python package (docs/PyTorch.md)."""

import argparse
import pathlib
import sys

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from model import GPT, loss_fn  # noqa: E402

VOCAB, CONTEXT, ROWS = 32, 16, 16
STAGES, MICROBATCHES = 4, 8
# Tensor parallelism in torch.distributed.tensor.parallel's vocabulary: the
# fused Q, K, V projection and the MLP's first layer split by output
# features, the projections after them by input features (Megatron-LM's
# column then row).
PLAN = {"blocks.*.attn.qkv": "colwise", "blocks.*.attn.proj": "rowwise",
        "blocks.*.mlp.0": "colwise", "blocks.*.mlp.2": "rowwise"}
LR, SEED = 0.05, 1
TAG_CORPUS = 0x434F5250  # runtime/lib/driver/corpus.c
MASK = (1 << 64) - 1


def splitmix64(x):
    """The runtime's hash step (runtime/lib/pprt_math.h)."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def pprt_hash(seed, keys):
    h = splitmix64(seed)
    for key in keys:
        h = splitmix64(h ^ key)
    return h


def write_tokens(path):
    """examples/gpt/corpus.txt's characters as indices into its sorted
    distinct bytes, as a flat uint16 file (--tokens)."""
    text = (HERE.parent / "gpt" / "corpus.txt").read_bytes()
    alphabet = sorted(set(text))
    ids = np.array([alphabet.index(c) for c in text], dtype="<u2")
    ids.tofile(path)
    return ids.astype(np.int64)


def batch(tokens, step, rows=ROWS):
    """The runtime's --tokens windows of a step's `rows` global rows: row r
    starts at a hash of (seed, step, r); targets are the next tokens."""
    starts = len(tokens) - CONTEXT
    ids, targets = [], []
    for row in range(rows):
        start = pprt_hash(SEED, [TAG_CORPUS, step, row]) % starts
        ids.append(tokens[start:start + CONTEXT])
        targets.append(tokens[start + 1:start + 1 + CONTEXT])
    return torch.tensor(np.array(ids)), torch.tensor(np.array(targets))


def pytorch_losses(model, tokens, steps, criterion=None, lr=LR,
                   microbatches=MICROBATCHES, replicas=1):
    """SGD with gradients accumulated over the micro-batches of every
    replica: pp's step loss is the sum of its micro-batches' losses, and
    replicas sum theirs (docs/PyTorch.md, docs/DataParallel.md).
    `criterion` defaults to the GPT's loss_fn."""
    criterion = criterion or loss_fn
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    chunks = microbatches * replicas
    losses = []
    for step in range(steps):
        ids, targets = batch(tokens, step, ROWS * replicas)
        optimizer.zero_grad()
        total = 0.0
        for x, t in zip(ids.chunk(chunks), targets.chunk(chunks)):
            loss = criterion(model(x), t)
            loss.backward()
            total += loss.item()
        optimizer.step()
        losses.append(total)
    return losses


def next_loss(model, tokens, step):
    """The loss of step `step` without training, as pp reports it."""
    ids, targets = batch(tokens, step)
    with torch.no_grad():
        return sum(loss_fn(model(x), t).item() for x, t in
                   zip(ids.chunk(MICROBATCHES), targets.chunk(MICROBATCHES)))


def export(out, parallelize_plan=None, tensor_parallel=None):
    """The model with its initial weights, exported for pp, its weights
    split as `parallelize_plan` says (pp.torch.export)."""
    import pp.torch
    torch.manual_seed(0)
    model = GPT(vocab=VOCAB, context=CONTEXT)
    ids = torch.zeros(ROWS, CONTEXT, dtype=torch.int64)
    exported = pp.torch.export(model, (ids, ids), loss_fn, out / "gpt.mlir",
                               whole_batch=True,
                               parallelize_plan=parallelize_plan,
                               tensor_parallel=tensor_parallel)
    return model, exported


def compile_for(exported, stages=STAGES, tensor_parallel=1,
                schedule="1f1b", **layout):
    """pp's program for `stages` pipeline ranks of `tensor_parallel`
    processes each, or for what the layout planner chooses given
    `devices` (and `memory_cap`)."""
    import pp
    if layout.get("devices"):
        return pp.compile(exported.mlir, microbatches=MICROBATCHES,
                          schedule=schedule, **layout)
    return pp.compile(exported.mlir, stages=stages,
                      microbatches=MICROBATCHES, schedule=schedule,
                      tensor_parallel=tensor_parallel, **layout)


def run_program(program, exported, tokens_path, steps, save=None):
    """Trains `program` from the exported weights on the token file."""
    import pp
    return pp.run(program, steps=steps, lr=LR, seed=SEED,
                  init_weights=exported.weights, save=save,
                  extra_args=["--tokens", str(tokens_path)])


def train_with_pp(exported, tokens_path, steps, save, stages=STAGES,
                  tensor_parallel=1):
    """pp's run on `stages` pipeline ranks of `tensor_parallel` processes
    each (1f1b)."""
    program = compile_for(exported, stages, tensor_parallel)
    return run_program(program, exported, tokens_path, steps, save)


def print_layout(program, svg):
    """What the compile chose and the schedule the program runs (its
    timeline also written to `svg`)."""
    print(f"== layout: {program.processes} processes = {program.ranks} "
          f"pipeline ranks x {program.tensor_parallel} tensor-parallel x "
          f"{program.replicas} replicas, {program.stages} stages, "
          f"{program.microbatches} micro-batches")
    for remark in program.remarks:
        print(f"   {remark}")
    print("== schedule (unit-cost timeline: F forward, B input gradient, "
          "W weight gradient)")
    timeline = program.timeline()
    print(timeline.to_ascii(), end="")
    timeline.to_svg(svg)
    print(f"   (as SVG: {svg})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path("torch-gpt-out"))
    parser.add_argument("--tensor-parallel", type=int, default=1,
                        help="processes per pipeline rank (the stages "
                        "become 4 / T)")
    parser.add_argument("--plan", choices=["dtensor", "megatron"],
                        default="dtensor",
                        help="with --tensor-parallel: this script's PLAN "
                        "(parallelize_plan), or pp's default Megatron plan")
    parser.add_argument("--devices", type=int,
                        help="processes to lay the model out on: pp's "
                        "layout planner chooses stages, tensor-parallel "
                        "size and replicas")
    parser.add_argument("--memory-cap", type=float,
                        help="with --devices: bytes each process may hold")
    parser.add_argument("--schedule", default="1f1b",
                        help="the pipeline schedule (e.g. 1f1b, zb-h1, auto)")
    parser.add_argument("--rtol", type=float, default=1e-5,
                        help="the largest relative difference from "
                        "PyTorch's loss a step may have")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tp = args.tensor_parallel
    plan = PLAN if tp > 1 and args.plan == "dtensor" else None
    model, exported = export(args.out, plan, tp)
    tokens = write_tokens(args.out / "tokens.bin")
    layout = {"devices": args.devices}
    if args.memory_cap is not None:
        layout["memory_cap"] = args.memory_cap
    program = compile_for(exported, STAGES // tp, tp, args.schedule,
                          **layout)
    print_layout(program, args.out / "timeline.svg")
    print(f"== training {args.steps} steps on {program.processes} "
          "processes, beside a PyTorch loop over the same batches")
    run = run_program(program, exported, args.out / "tokens.bin",
                      args.steps, args.out / "trained.safetensors")
    expected = pytorch_losses(model, tokens, args.steps,
                              replicas=program.replicas)
    tokens_per_step = ROWS * program.replicas * CONTEXT
    worst = 0.0
    for step, (loss, ref, seconds) in enumerate(
            zip(run.losses, expected, run.step_times), 1):
        rel = abs(loss - ref) / abs(ref)
        worst = max(worst, rel)
        print(f"step {step:3d}  pp {loss:.7f}  pytorch {ref:.7f}  "
              f"rel {rel:.1e}  {seconds * 1e3:7.2f} ms  "
              f"{tokens_per_step / seconds:9.0f} tokens/s")
    if len(run.losses) != args.steps or worst > args.rtol:
        sys.exit(f"train.py: pp's losses differ from PyTorch's (largest "
                 f"relative difference {worst:.1e}, --rtol {args.rtol:g}; "
                 f"{len(run.losses)} of {args.steps} steps)")
    print(f"== pp's {args.steps} losses match PyTorch's within "
          f"{args.rtol:g} relative")


if __name__ == "__main__":
    main()
