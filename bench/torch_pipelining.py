#!/usr/bin/env python3
"""pp against torch.distributed.pipelining on the same PyTorch GPT
(examples/torch-gpt's model.py): tokens/s and losses of each.

1. Two ranks, 1f1b, the same micro-batches, batch, weights and token
   windows: pp (the model exported with pp.torch, cut before the middle
   block, compiled for 2 stages) against `Schedule1F1B` on 2 gloo
   processes holding the same halves. Both sum the micro-batches' mean
   cross-entropies and their gradients (`scale_grads=False`), then take
   one SGD step.
2. One process: pp's 1-stage program against PyTorch eager and
   `torch.compile` on the whole batch (one micro-batch).

Every process runs one thread (`OMP/OPENBLAS/MKL_NUM_THREADS=1`,
`torch.set_num_threads(1)`). Step times are medians after `--warmup`
steps (pp: its `--metrics` seconds on rank 0; the peer: the last rank's
wall time of `schedule.step` plus the SGD update); the runs alternate over
`--rounds`. With `--profile`, pp's 2-rank program also runs under
`--profile` and the script prints where its step goes (per stage:
forward and backward per micro-batch, the transfers).

  PYTHONPATH=build/python_packages ~/.cache/pp-python-venv/bin/python \\
      bench/torch_pipelining.py --pp-compile build/bin/pp-compile

Needs torch, torch_mlir, numpy and pp's Python package."""

import argparse
import json
import multiprocessing
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "torch-gpt"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import train as torch_gpt  # noqa: E402
from model import GPT, loss_fn  # noqa: E402

RANKS = 2


def build_model(args):
    torch.manual_seed(0)
    return GPT(vocab=args.vocab, context=args.context, dim=args.dim,
               heads=args.heads, layers=args.layers)


def batch(args, tokens, step):
    """The runtime's --tokens windows of a step (examples/torch-gpt)."""
    torch_gpt.ROWS, torch_gpt.CONTEXT = args.batch, args.context
    return torch_gpt.batch(tokens, step)


class FirstHalf(torch.nn.Module):
    """The embeddings and the first half of the blocks."""

    def __init__(self, model, cut):
        super().__init__()
        self.tokens, self.positions = model.tokens, model.positions
        self.blocks = model.blocks[:cut]

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.blocks(self.tokens(ids) + self.positions(positions))


class SecondHalf(torch.nn.Module):
    """The other blocks, the final norm and the head."""

    def __init__(self, model, cut):
        super().__init__()
        self.blocks, self.ln_f, self.head = (model.blocks[cut:], model.ln_f,
                                             model.head)

    def forward(self, x):
        return self.head(self.ln_f(self.blocks(x)))


def peer_rank(rank, args, tokens, directory):
    """One rank of Schedule1F1B; the last saves its losses and step times."""
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B
    torch.set_num_threads(1)
    dist.init_process_group("gloo",
                            init_method=f"file://{directory}/rendezvous",
                            rank=rank, world_size=RANKS)
    model = build_model(args)
    cut = args.layers // 2
    half = FirstHalf(model, cut) if rank == 0 else SecondHalf(model, cut)
    stage = PipelineStage(half, rank, RANKS, torch.device("cpu"))
    schedule = Schedule1F1B(stage, args.microbatches, loss_fn=loss_fn,
                            scale_grads=False)
    optimizer = torch.optim.SGD(half.parameters(), lr=args.lr)
    losses, seconds = [], []
    for step in range(args.steps):
        ids, targets = batch(args, tokens, step)
        dist.barrier()
        start = time.perf_counter()
        optimizer.zero_grad()
        if rank == 0:
            schedule.step(ids)
        else:
            parts = []
            schedule.step(target=targets, losses=parts)
            losses.append(sum(part.item() for part in parts))
        optimizer.step()
        seconds.append(time.perf_counter() - start)
    if rank == RANKS - 1:
        with open(directory / "peer.json", "w") as f:
            json.dump({"losses": losses, "seconds": seconds}, f)
    dist.destroy_process_group()


def run_ranks(peer_rank, peer_args, label, work, ranks=RANKS):
    """Runs peer_rank(rank, *peer_args, directory) in one spawned process a
    rank; the losses and step seconds that a rank saved in peer.json."""
    directory = pathlib.Path(tempfile.mkdtemp(dir=work))
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=peer_rank,
                                 args=(rank, *peer_args, directory))
                 for rank in range(ranks)]
    for process in processes:
        process.start()
    try:
        for rank, process in enumerate(processes):
            process.join(timeout=3600)
            if process.exitcode != 0:
                sys.exit(f"{label} rank {rank} exited {process.exitcode}")
    finally:  # a rank that failed leaves the others waiting in gloo
        for process in processes:
            process.kill()
    with open(directory / "peer.json") as f:
        report = json.load(f)
    return report["losses"], report["seconds"]


def run_peer(args, tokens, work):
    return run_ranks(peer_rank, (args, tokens), "torch_pipelining.py: peer",
                     work)


def single_process(args, tokens, compiled):
    """(losses, step seconds) of eager or torch.compile'd training on the
    whole batch (one micro-batch), one thread."""
    torch.set_num_threads(1)
    model = build_model(args)
    forward = torch.compile(model) if compiled else model
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    losses, seconds = [], []
    for step in range(args.steps):
        ids, targets = batch(args, tokens, step)
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = loss_fn(forward(ids), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        seconds.append(time.perf_counter() - start)
    return losses, seconds


def pp_compile(args, exported, stages, microbatches, out):
    cmd = [args.pp_compile, str(exported.mlir), "--stages", str(stages),
           "--microbatches", str(microbatches), "--schedule",
           "1f1b" if stages > 1 else "gpipe", "-o", str(out)]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


def pp_run(args, exe, exported, tokens_path, ranks, extra=(), env=None):
    """(losses, step seconds) of the pp program, from its --metrics; `env`
    replaces the environment."""
    metrics = pathlib.Path(str(exe) + ".metrics")
    cmd = ["mpirun", "-np", str(ranks), str(exe), "--steps", str(args.steps),
           "--lr", repr(args.lr), "--seed", "1", "--init-weights",
           str(exported.weights), "--tokens", str(tokens_path), "--metrics",
           str(metrics), "--timeout", "600", *extra]
    subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    return [r["loss"] for r in records], [r["seconds"] for r in records]


def pp_profile(args, exe, exported, tokens_path):
    profile = pathlib.Path(str(exe) + ".profile.json")
    cmd = ["mpirun", "-np", str(RANKS), str(exe), "--warmup",
           str(args.warmup), "--steps", str(args.steps - args.warmup),
           "--lr", repr(args.lr), "--init-weights", str(exported.weights),
           "--tokens", str(tokens_path), "--profile", str(profile),
           "--timeout", "600"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(profile.read_text())


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def max_relative(a, b):
    return max(abs(x - y) / abs(y) for x, y in zip(a, b))


def report(args, name, losses, samples, reference):
    """A table row: median step ms, tokens/s, each round's median, the
    losses' largest relative difference from `reference`."""
    rounds = [statistics.median(s[args.warmup:]) for s in samples]
    step = statistics.median(rounds)
    tokens = args.batch * args.context / step
    each = ", ".join(f"{r * 1e3:.0f}" for r in rounds)
    diff = max_relative(losses, reference) if reference else 0.0
    print(f"| {name} | {step * 1e3:.1f} | {tokens:.0f} | {each} | "
          f"{losses[0]:.6f} | {losses[-1]:.6f} | {diff:.1e} |")
    return step


def print_header(title):
    print(f"\n{title}\n")
    print("| run | step ms | tokens/s | each round (ms) | first loss | "
          "last loss | max rel. loss diff |")
    print("|---|---:|---:|---|---:|---:|---:|")


def print_profile(profile):
    print("\npp's 2-rank step (--profile, ms; forward and backward per "
          "micro-batch):\n")
    print("| stage | forward | backward | micro-batches x (F + B) |")
    print("|---:|---:|---:|---:|")
    meta = profile["meta"]
    for s in profile["stages"]:
        backward = s["backward_input"] + s["backward_weight"]
        busy = meta["microbatches"] * (s["forward"] + backward)
        print(f"| {s['stage']} | {s['forward']:.2f} | {backward:.2f} | "
              f"{busy:.1f} |")
    print(f"\nstep {meta['step_time']:.1f} ms, transfer "
          f"{profile['transfer']:.3f} ms")


def add_run_arguments(parser):
    """The model, the training run and the rounds, shared with
    pipeline_speed.py."""
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--context", type=int, default=128)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(parser)
    parser.add_argument("--single", action=argparse.BooleanOptionalAction,
                        default=True, help="also pp 1 stage, eager, compile")
    parser.add_argument("--profile", action=argparse.BooleanOptionalAction,
                        default=True)
    args = parser.parse_args()
    import pp.torch

    work = pathlib.Path(tempfile.mkdtemp(prefix="pp-torch-pipelining-"))
    model = build_model(args)
    ids = torch.zeros(args.batch, args.context, dtype=torch.int64)
    cut = f"blocks.{args.layers // 2}"
    split = pp.torch.export(model, (ids, ids), loss_fn, work / "gpt2.mlir",
                            split_points=[cut], whole_batch=True)
    whole = pp.torch.export(model, (ids, ids), loss_fn, work / "gpt1.mlir",
                            whole_batch=True)
    tokens = torch_gpt.write_tokens(work / "tokens.bin")
    if int(tokens.max()) >= args.vocab:
        sys.exit("torch_pipelining.py: the corpus has more ids than --vocab")
    two = work / "pp2"
    compile2 = pp_compile(args, split, RANKS, args.microbatches, two)
    one = work / "pp1"
    compile1 = (pp_compile(args, whole, 1, 1, one) if args.single else 0)
    loads = [load_average()]
    runs = {name: [] for name in ("pp", "peer", "pp1", "eager", "compile")}
    losses = {}
    for _ in range(args.rounds):
        losses["pp"], t = pp_run(args, two, split, work / "tokens.bin", RANKS)
        runs["pp"].append(t)
        losses["peer"], t = run_peer(args, tokens, work)
        runs["peer"].append(t)
        if args.single:
            losses["pp1"], t = pp_run(args, one, whole, work / "tokens.bin",
                                      1)
            runs["pp1"].append(t)
            losses["eager"], t = single_process(args, tokens, False)
            runs["eager"].append(t)
            losses["compile"], t = single_process(args, tokens, True)
            runs["compile"].append(t)
        loads.append(load_average())
    print(f"GPT: vocabulary {args.vocab}, context {args.context}, width "
          f"{args.dim}, {args.heads} heads, {args.layers} blocks, batch "
          f"{args.batch}; SGD lr {args.lr}; {args.steps} steps, medians "
          f"after {args.warmup}; {args.rounds} rounds; load average "
          f"{' -> '.join(loads)}; pp-compile {compile2:.0f} s (2 stages), "
          f"{compile1:.0f} s (1 stage)")
    print_header(f"2 ranks, 1f1b, {args.microbatches} micro-batches "
                 "(losses against the peer's)")
    peer = report(args, "torch.distributed.pipelining Schedule1F1B (gloo)",
                  losses["peer"], runs["peer"], None)
    mine = report(args, "pp", losses["pp"], runs["pp"], losses["peer"])
    print(f"\npp's tokens/s are {peer / mine:.2f}x the peer's")
    if args.single:
        print_header("1 process, 1 micro-batch (losses against eager's)")
        eager = report(args, "PyTorch eager", losses["eager"], runs["eager"],
                       None)
        compiled = report(args, "torch.compile", losses["compile"],
                          runs["compile"], losses["eager"])
        mine1 = report(args, "pp, 1 stage", losses["pp1"], runs["pp1"],
                       losses["eager"])
        print(f"\npp's tokens/s are {eager / mine1:.2f}x eager's and "
              f"{compiled / mine1:.2f}x torch.compile's")
    if args.profile:
        print_profile(pp_profile(args, two, split, work / "tokens.bin"))


if __name__ == "__main__":
    main()
