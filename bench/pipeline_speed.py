#!/usr/bin/env python3
"""pp's pipeline schedules against torch.distributed.pipelining's on the
same PyTorch GPT (examples/torch-gpt's model.py), 2 processes: tokens/s
and losses of each, every schedule of both in one run.

pp: the model exported with pp.torch at the whole batch's shape, cut by
pp's stage planner, compiled for 2 ranks under each of `--pp-schedules`
(4 stages for the interleaved ones; auto chooses how many). The peer:
the same blocks cut evenly into one stage per rank (two for its
interleaved and V schedules, placed as each schedule expects), gloo,
under each of `--peer-schedules`. Both
sum the micro-batches' mean cross-entropies and their gradients
(`scale_grads=False`), then take one SGD step, from the same weights over
the same token windows.

Every process runs one thread. Step times are medians after `--warmup`
steps (pp: its `--metrics` seconds on rank 0; the peer: the wall time of
`schedule.step` plus the SGD update on the rank holding the loss); runs
alternate over `--rounds` (pp's schedules, then the peer's, each round).

  PYTHONPATH=build/python_packages ~/.cache/pp-python-venv/bin/python \\
      bench/pipeline_speed.py --pp-compile build/bin/pp-compile

Needs torch, torch_mlir, numpy and pp's Python package."""

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import torch_pipelining as common  # noqa: E402  (sets one thread)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from model import loss_fn  # noqa: E402

RANKS = 2
# The peer's schedules: how many stages each rank holds and where.
PEER_PLACEMENT = {
    "Schedule1F1B": "single", "ScheduleGPipe": "single",
    "ScheduleInterleaved1F1B": "loop", "ScheduleLoopedBFS": "loop",
    "ScheduleInterleavedZeroBubble": "loop", "ScheduleZBVZeroBubble": "v",
}
PP_STAGES = {"interleaved-1f1b": 2 * RANKS, "interleaved-zb": 2 * RANKS,
             "looped-bfs": 2 * RANKS, "zbv": 2 * RANKS,
             "dualpipev": 2 * RANKS}


class Chunk(torch.nn.Module):
    """Blocks [begin, end) of the GPT, with the embeddings if it is the
    first chunk and the final norm and head if it is the last."""

    def __init__(self, model, begin, end, first, last):
        super().__init__()
        self.first, self.last = first, last
        if first:
            self.tokens, self.positions = model.tokens, model.positions
        self.blocks = model.blocks[begin:end]
        if last:
            self.ln_f, self.head = model.ln_f, model.head

    def forward(self, x):
        if self.first:
            positions = torch.arange(x.shape[1], device=x.device)
            x = self.tokens(x) + self.positions(positions)
        x = self.blocks(x)
        return self.head(self.ln_f(x)) if self.last else x


def stages_of_rank(placement, rank):
    """The global stage indices `rank` holds, and how many there are."""
    if placement == "single":
        return [rank], RANKS
    if placement == "loop":
        return [rank, rank + RANKS], 2 * RANKS
    return [rank, 2 * RANKS - 1 - rank], 2 * RANKS  # V


def peer_rank(rank, name, args, tokens, directory):
    """One rank of the peer's schedule `name`; the rank holding the last
    stage saves its losses and step times."""
    import torch.distributed.pipelining as pipelining
    torch.set_num_threads(1)
    dist.init_process_group("gloo",
                            init_method=f"file://{directory}/rendezvous",
                            rank=rank, world_size=RANKS)
    model = common.build_model(args)
    indices, num_stages = stages_of_rank(PEER_PLACEMENT[name], rank)
    bounds = [round(i * args.layers / num_stages)
              for i in range(num_stages + 1)]
    chunks = [Chunk(model, bounds[s], bounds[s + 1], s == 0,
                    s == num_stages - 1) for s in indices]
    stages = [pipelining.PipelineStage(chunk, s, num_stages,
                                       torch.device("cpu"))
              for chunk, s in zip(chunks, indices)]
    schedule_class = getattr(pipelining, name)
    schedule = schedule_class(stages if len(stages) > 1 else stages[0],
                              args.microbatches, loss_fn=loss_fn,
                              scale_grads=False)
    parameters = [p for chunk in chunks for p in chunk.parameters()]
    optimizer = torch.optim.SGD(parameters, lr=args.lr)
    holds_first, holds_last = 0 in indices, num_stages - 1 in indices
    losses, seconds = [], []
    for step in range(args.steps):
        ids, targets = common.batch(args, tokens, step)
        dist.barrier()
        start = time.perf_counter()
        optimizer.zero_grad()
        inputs = (ids,) if holds_first else ()
        parts = []
        if holds_last:
            schedule.step(*inputs, target=targets, losses=parts)
            losses.append(sum(part.item() for part in parts))
        else:
            schedule.step(*inputs)
        optimizer.step()
        seconds.append(time.perf_counter() - start)
    if holds_last:
        with open(directory / "peer.json", "w") as f:
            json.dump({"losses": losses, "seconds": seconds}, f)
    dist.destroy_process_group()


def run_peer(name, args, tokens, work):
    return common.run_ranks(peer_rank, (name, args, tokens),
                            f"pipeline_speed.py: {name}", work, RANKS)


def pp_compile(args, exported, schedule, out, tokens_path):
    """Compiles for `schedule` on 2 ranks; returns auto's remarks, if any.
    auto schedules by the costs pp-compile measures first, on the token
    file the run reads, and chooses the stages (no --stages): one or more
    per rank, whichever count its schedule runs fastest."""
    stages = [] if schedule == "auto" else [
        "--stages", str(PP_STAGES.get(schedule, RANKS))]
    cmd = [args.pp_compile, str(exported.mlir), *stages,
           "--ranks", str(RANKS), "--microbatches", str(args.microbatches),
           "--schedule", schedule, "-o", str(out),
           f"--run-arg=--tokens={tokens_path}"]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return [line.split("remark: ", 1)[1] for line in done.stderr.splitlines()
            if any(f"remark: {kind}" in line for kind in
                   ("auto:", "scheduling by", "--schedule auto"))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.add_run_arguments(parser)
    parser.add_argument("--pp-schedules", default="1f1b,zb-h1,"
                        "interleaved-1f1b,auto")
    parser.add_argument("--peer-schedules", default="Schedule1F1B,"
                        "ScheduleGPipe,ScheduleInterleaved1F1B,"
                        "ScheduleInterleavedZeroBubble,ScheduleZBVZeroBubble")
    args = parser.parse_args()
    import pp.torch

    ours = args.pp_schedules.split(",")
    theirs = args.peer_schedules.split(",")
    unknown = [name for name in theirs if name not in PEER_PLACEMENT]
    if unknown:
        sys.exit(f"pipeline_speed.py: unknown peer schedules {unknown}; "
                 f"known: {', '.join(PEER_PLACEMENT)}")
    work = pathlib.Path(tempfile.mkdtemp(prefix="pp-pipeline-speed-"))
    model = common.build_model(args)
    ids = torch.zeros(args.batch, args.context, dtype=torch.int64)
    exported = pp.torch.export(model, (ids, ids), loss_fn, work / "gpt.mlir",
                               whole_batch=True)
    tokens = common.torch_gpt.write_tokens(work / "tokens.bin")
    if int(tokens.max()) >= args.vocab:
        sys.exit("pipeline_speed.py: the corpus has more ids than --vocab")
    remarks = {}
    for schedule in ours:
        remarks[schedule] = pp_compile(args, exported, schedule,
                                       work / f"pp-{schedule}",
                                       work / "tokens.bin")
    loads = [common.load_average()]
    runs = {name: [] for name in ours + theirs}
    losses = {}
    for _ in range(args.rounds):
        for schedule in ours:
            losses[schedule], t = common.pp_run(
                args, work / f"pp-{schedule}", exported, work / "tokens.bin",
                RANKS)
            runs[schedule].append(t)
        for name in theirs:
            losses[name], t = run_peer(name, args, tokens, work)
            runs[name].append(t)
        loads.append(common.load_average())
    print(f"GPT: vocabulary {args.vocab}, context {args.context}, width "
          f"{args.dim}, {args.heads} heads, {args.layers} blocks, batch "
          f"{args.batch}, {args.microbatches} micro-batches, 2 processes; "
          f"SGD lr {args.lr}; {args.steps} steps, medians after "
          f"{args.warmup}; {args.rounds} rounds; load average "
          f"{' -> '.join(loads)}")
    reference = losses[theirs[0]]
    common.print_header(f"losses against {theirs[0]}'s")
    steps = {}
    for name in theirs:
        steps[name] = common.report(args, f"torch {name} (gloo)",
                                    losses[name], runs[name], reference)
    for schedule in ours:
        steps[schedule] = common.report(args, f"pp {schedule}",
                                        losses[schedule], runs[schedule],
                                        reference)
    best_peer = min(theirs, key=steps.get)
    best_pp = min(ours, key=steps.get)
    print(f"\npp's best ({best_pp}) makes "
          f"{steps[best_peer] / steps[best_pp]:.2f}x the tokens/s of the "
          f"peer's best ({best_peer})")
    for schedule, lines in remarks.items():
        for line in lines:
            print(f"pp {schedule}: {line}")
            made = re.match(r"auto: makespan (\S+) s", line)
            if made:
                simulated = float(made.group(1))
                print(f"pp {schedule}: simulated {simulated * 1e3:.1f} ms, "
                      f"measured {steps[schedule] * 1e3:.1f} ms "
                      f"({simulated / steps[schedule] - 1:+.1%})")


if __name__ == "__main__":
    main()
