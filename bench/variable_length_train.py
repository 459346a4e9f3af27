#!/usr/bin/env python3
"""Measured tokens/s of training the GPT on variable-length samples, in
two settings, each against padding every sample to the longest of all.

Buckets across steps (the first table): each step's samples padded to the
power-of-two bucket that holds its longest, one program per bucket.

Draws sample lengths from a long-tailed distribution (a log-normal clipped
to [1, max-length], seeded), sorts them longest first and cuts them into
steps of --batch samples (length-grouped steps), then trains the
token-weighted GPT (examples/gpt/gen_gpt.py --loss token-weighted) on the
same steps, through the runtime's --sample-lengths loader, twice:
  padded   one program whose context is max-length: every sample padded to
           the longest;
  buckets  one program per power-of-two context (compiled once each);
           every step runs on the smallest that holds its longest sample.
Both are pipelines of --ranks stages, 1f1b, --microbatches micro-batches.
Shape variants inside a step (the second table): every step holds
--long samples of up to max-length tokens and the rest of up to
--short-length (documents with a long tail); one program with two shape
variants (pp-compile --variant) runs the long samples' micro-batch at
max-length and the others at --short-length, against the same program
without the variant (every micro-batch at max-length). Both have
--variant-microbatches micro-batches of --long samples.

A plan per step (the third table): steps of --plan-batch samples drawn at
random (not grouped by length), trained by programs compiled with
`pp-compile --step-plans` at the --shapes variants (greedy schedules):
  padded    one shape, the first (every micro-batch at max-length);
  fixed     every step run by one plan, compiled for the pointwise longest
            sorted samples over the steps, so that every step fits it;
  per step  each step cut at the shapes by the dynamic program and run by
            its own plan and schedule;
  chosen    compiled for another draw of as many steps (the next seed)
            and one step of samples all max-length long (a plan that
            holds any step), run with --choose-plans: each step on the
            compiled plan that holds it with the fewest token slots.

Packing as the peer (the fourth table, --tables packing): documents of
an instruction-tuning-like length distribution (a log-normal of median
--pack-median, clipped to the context --pack-context), --pack-batch of
them a step in the order they come, trained three ways:
  padded    every document padded to the context, --microbatches
            micro-batches;
  packed    the documents concatenated back to back into full rows of the
            context, --pack-rows rows a step (one per micro-batch), the
            way packed training without cross-document masks runs: each
            row's attention spans the documents in it (mixing them unless
            masked), and costs the full context's;
  per step  a plan per step at the --pack-shapes variants (greedy).
Useful tokens are the documents' own in all three. The table ends with
what packing_is_cheaper, the cost rule choosing packing or the plans by
their FLOPs (attention over every pair of a row's positions), picks, and
what pp-compile --packing=auto picks by the step planner's costs.

With --model torch the third table trains examples/torch-gpt's PyTorch
GPT instead (--vocab ids, 32768 by default), exported at each shape with
pp.torch.export and its padded loss (padded_loss_fn: integer ids and
targets, f32 token weights), on --tokens of random ids over the whole
vocabulary: no one-hot anywhere. It needs torch, torch_mlir and pp's
package (run it with the venv's python and PYTHONPATH=build/python_packages).

Useful tokens are the samples' own (padding excluded); the seconds are the
runtime's per-step wall-clock times (--metrics) of every step after each
run's first (warm-up), the fastest of --repeats runs, so compilation is
not counted.

Example:
  python3 bench/variable_length_train.py --pp-compile build/bin/pp-compile
  PYTHONPATH=build/python_packages ~/.cache/pp-python-venv/bin/python \
      bench/variable_length_train.py --pp-compile build/bin/pp-compile \
      --model torch --dim 16 --max-length 64 --median 12 --steps 8 \
      --shapes 2x64,8x16,16x4
"""

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN_GPT = os.path.join(ROOT, "examples", "gpt", "gen_gpt.py")
CORPUS = os.path.join(ROOT, "examples", "gpt", "corpus.txt")


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"FAILED ({proc.returncode}): {' '.join(cmd)}\n"
                 f"{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def draw_steps(args):
    """Steps of --batch samples, longest first over the whole draw."""
    rng = random.Random(args.seed)
    lengths = [max(1, min(args.max_length,
                          int(rng.lognormvariate(math.log(args.median), 1.0))))
               for _ in range(args.steps * args.batch)]
    lengths.sort(reverse=True)
    return [lengths[i:i + args.batch]
            for i in range(0, len(lengths), args.batch)]


def bucket_of(length, args):
    bucket = args.min_bucket
    while bucket < length:
        bucket *= 2
    return min(bucket, args.max_length)


def generate(args, workdir, seq, batch, extra=()):
    model = os.path.join(workdir, f"gpt-{seq}-{batch}.mlir")
    run([sys.executable, GEN_GPT, "--layers", str(args.layers), "--dim",
         str(args.dim), "--heads", str(args.heads), "--seq", str(seq),
         "--positions", str(args.max_length), "--batch", str(batch),
         "--loss", "token-weighted", "-o", model] + list(extra))
    return model


def export_torch(args, workdir, seq, batch):
    """examples/torch-gpt's GPT at `batch` rows of `seq` positions with its
    padded loss, cut before block 1; the same weights at every shape (one
    seeded model per run). The model's path and its weights file."""
    import torch
    import pp.torch
    if not hasattr(args, "torch_model"):
        sys.path.insert(0, os.path.join(ROOT, "examples", "torch-gpt"))
        import model as torch_gpt
        torch.manual_seed(0)
        args.torch_model = torch_gpt.GPT(
            vocab=args.vocab, context=args.max_length, dim=args.dim,
            heads=args.heads, layers=args.layers)
        args.padded_loss_fn = torch_gpt.padded_loss_fn
        args.torch_exports = {}
    if (seq, batch) in args.torch_exports:
        return args.torch_exports[seq, batch]
    ids = torch.zeros(batch, seq, dtype=torch.int64)
    exported = pp.torch.export(
        args.torch_model, (ids, ids, torch.zeros(batch, seq)),
        args.padded_loss_fn, os.path.join(workdir, f"torch-{seq}-{batch}.mlir"),
        num_targets=2, microbatches=1, split_points=["blocks.1"])
    args.init_weights = str(exported.weights)
    args.torch_exports[seq, batch] = str(exported.mlir)
    return str(exported.mlir)


def data_options(args, workdir):
    """The runtime's options for the samples' tokens (and the torch GPT's
    initial weights)."""
    if args.model == "gen":
        return ["--corpus", CORPUS]
    tokens = os.path.join(workdir, "tokens.npy")
    if not os.path.exists(tokens):
        import numpy
        rng = numpy.random.default_rng(args.seed)
        numpy.save(tokens, rng.integers(0, args.vocab, 1 << 20)
                   .astype("<u2" if args.vocab <= 1 << 16 else "<u4"))
    return ["--tokens", tokens, "--init-weights", args.init_weights]


def compile_program(args, workdir, seq):
    exe = os.path.join(workdir, f"gpt-{seq}")
    run([args.pp_compile, generate(args, workdir, seq, args.batch),
         "--stages", str(args.ranks), "--microbatches",
         str(args.microbatches), "--schedule", "1f1b", "-o", exe])
    return exe


def compile_variants(args, workdir, with_variant):
    """--variant-microbatches micro-batches of --long samples; micro-batch
    0 at max-length, the others at --short-length with the variant."""
    m = args.variant_microbatches
    cut = ["--stage-ends", "0"]
    exe = os.path.join(workdir, f"gpt-variants-{int(with_variant)}")
    variant = []
    if with_variant:
        short = generate(args, workdir, args.short_length, m * args.long, cut)
        variant = [f"--variant={short}:" + ",".join(map(str, range(1, m)))]
    run([args.pp_compile,
         generate(args, workdir, args.max_length, m * args.long, cut),
         "--stages", str(args.ranks), "--microbatches", str(m),
         "--schedule", "1f1b", "-o", exe] + variant)
    return exe


def draw_mixed_steps(args):
    """Steps of --long long samples and the rest short, in shuffled order."""
    rng = random.Random(args.seed)
    samples = args.variant_microbatches * args.long
    steps = []
    for _ in range(args.steps):
        step = [rng.randint(args.short_length + 1, args.max_length)
                for _ in range(args.long)]
        step += [rng.randint(1, args.short_length)
                 for _ in range(samples - args.long)]
        rng.shuffle(step)
        steps.append(step)
    return steps


def write_index(workdir, steps, name):
    """The index of `steps`, the first repeated as a warm-up step."""
    index = os.path.join(workdir, f"{name}.txt")
    with open(index, "w") as f:
        for step in [steps[0]] + steps:
            f.write(" ".join(map(str, step)) + "\n")
    return index


def train(args, workdir, exe, steps, name, index=None, extra=(),
          output=None):
    """The least over --repeats runs of the seconds of the steps after the
    first (the first repeats the second's samples as warm-up); the last
    run's output appended to `output`."""
    index = index or write_index(workdir, steps, name)
    metrics = os.path.join(workdir, f"{name}.json")
    best = math.inf
    for _ in range(args.repeats):
        out = run(["mpirun", "-np", str(args.ranks), exe, "--steps",
                   str(len(steps) + 1), "--lr", "0.1", "--sample-lengths",
                   index, "--metrics", metrics]
                  + data_options(args, workdir) + list(extra))
        with open(metrics) as f:
            best = min(best, sum(json.loads(line)["seconds"]
                                 for line in f.readlines()[1:]))
    if output is not None:
        output.append(out)
    return best


def draw_random_steps(args, seed):
    """Steps of --plan-batch samples drawn independently (not grouped)."""
    rng = random.Random(seed)
    return [[max(1, min(args.max_length,
                        int(rng.lognormvariate(math.log(args.median), 1.0))))
             for _ in range(args.plan_batch)] for _ in range(args.steps)]


def compile_planned(args, workdir, shapes, index, name):
    """A program of `shapes` ((rows, length), the first the main model),
    planned per step of `index`; with the micro-batch tokens of every step
    but the warm-up and of each plan, from pp-compile's remark. Sets
    args.packing_remark to what pp-compile --packing=auto chooses."""
    cut = ["--stage-ends", "0"]
    models = [generate(args, workdir, length, rows, cut)
              if args.model == "gen" else
              export_torch(args, workdir, length, rows)
              for rows, length in shapes]
    exe = os.path.join(workdir, f"gpt-{name}")
    command = [args.pp_compile, models[0], "--stages", str(args.ranks),
               "--microbatches", "1", "--schedule", "greedy", "--step-plans",
               index] + ["--variant=" + m for m in models[1:]]
    out = subprocess.run(command + ["-o", exe], capture_output=True,
                         text=True)
    if out.returncode != 0:
        sys.exit(f"FAILED: pp-compile {name}\n{out.stderr}")
    choice = subprocess.run(command + ["--packing=auto", "--emit=schedule",
                                       "-o", os.devnull],
                            capture_output=True, text=True)
    remark = re.search(r"remark: (step plans .*)", choice.stderr)
    args.packing_remark = remark.group(1) if remark else choice.stderr
    padded, plans = 0, {}
    args.step_shapes = []
    for line in out.stderr.splitlines():
        step = re.match(r"\s*step (\d+): plan (\d+), samples \S+ at (.*)",
                        line)
        if not step:
            continue
        shapes = [(int(r), int(n)) for r, n in
                  re.findall(r"(\d+)x(\d+)", step.group(3))]
        slots = sum(r * n for r, n in shapes)
        plans[int(step.group(2))] = slots
        padded += slots if int(step.group(1)) > 0 else 0
        args.step_shapes += [shapes] if int(step.group(1)) > 0 else []
    return exe, padded, plans


def chosen_slots(output, plans):
    """The micro-batch tokens of the steps but the warm-up, by the plans
    --choose-plans reports; None if it lists only some."""
    chosen = re.search(r"--choose-plans: .* run plans ([\d ]+)(\.\.\.)?$",
                       output, re.M)
    if not chosen or chosen.group(2):
        return None
    return sum(plans[int(p)] for p in chosen.group(1).split()[1:])


def per_step_plans(args):
    """The third table: padded, one fixed plan, a plan per step."""
    shapes = [tuple(map(int, s.split("x"))) for s in args.shapes.split(",")]
    steps = draw_random_steps(args, args.seed)
    tokens = sum(map(sum, steps))
    # Every step fits the plan of the longest sorted samples.
    envelope = [max(col) for col in
                zip(*[sorted(step, reverse=True) for step in steps])]
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        index = write_index(workdir, steps, "steps")
        fixed = write_index(workdir, [envelope] * len(steps), "envelope")
        other = write_index(workdir, draw_random_steps(args, args.seed + 1)
                            + [[args.max_length] * args.plan_batch], "other")
        for label, program_shapes, plan_index, extra in [
                ("every micro-batch at the longest", shapes[:1], index, []),
                ("one plan fitting every step", shapes, fixed, []),
                ("a plan per step", shapes, index, []),
                ("compiled plans chosen per step", shapes, other,
                 ["--choose-plans"])]:
            name = str(len(rows))
            exe, padded, plans = compile_planned(args, workdir,
                                                 program_shapes, plan_index,
                                                 name)
            output = []
            seconds = train(args, workdir, exe, steps, name, index, extra,
                            output)
            if extra:
                padded = chosen_slots(output[0], plans)
            rows.append((label, padded, len(plans), seconds))
    model = (f"token-weighted GPT (one-hot), d_model {args.dim}"
             if args.model == "gen" else
             f"PyTorch GPT (integer ids), vocabulary {args.vocab}, d_model "
             f"{args.dim}")
    print(f"{len(steps)} steps of {args.plan_batch} samples drawn at random, "
          f"{tokens} tokens (median {args.median:g}, max {args.max_length}); "
          f"{args.ranks} stages, greedy; shapes {args.shapes}; {model}, "
          f"{args.layers} layers")
    print(f"{'run':<34} {'padded tokens':>13} {'plans':>5} {'seconds':>9} "
          f"{'tokens/s':>9}")
    for label, padded, plans, seconds in rows:
        print(f"{label:<34} {padded if padded else '?':>13} {plans:>5} "
              f"{seconds:>9.3f} {tokens / seconds:>9.0f}")
    print(f"speed-up {rows[0][3] / rows[2][3]:.2f}x over padding, "
          f"{rows[1][3] / rows[2][3]:.2f}x over one fixed plan; chosen "
          f"plans {rows[0][3] / rows[3][3]:.2f}x over padding")


def row_cost(positions, dim):
    """A transformer layer's forward FLOPs on one row of `positions`
    tokens at width `dim`: 24 dim^2 a token for the projections and the
    MLP (4 dim^2 and 8 dim^2 multiply-adds), and 4 dim a pair of
    positions for attention's scores and weighted sum (every pair: the
    stage code computes the causal mask's half too)."""
    return 24 * dim * dim * positions + 4 * dim * positions * positions


def packing_is_cheaper(plan_shapes, documents, context, dim):
    """Packing versus the planned buckets, by cost: whether the documents
    packed back to back into rows of `context` (every row at the full
    context, attention spanning the documents it mixes: the
    cross-document pairs are waste) cost less than the micro-batches of
    the step plans, `plan_shapes` a list of (rows, positions) per step.
    Ties go to the plans, which keep documents apart."""
    rows = -(-sum(documents) // context)
    packed = rows * row_cost(context, dim)
    planned = sum(r * row_cost(n, dim) for shapes in plan_shapes
                  for r, n in shapes)
    return packed < planned


def pack(documents, context, rows):
    """The documents' tokens back to back in rows of `context` (the last
    row holds the rest), `rows` a step; the last step filled with rows of
    one token (no document's)."""
    total = sum(documents)
    lengths = [context] * (total // context) + (
        [total % context] if total % context else [])
    lengths += [1] * (-len(lengths) % rows)
    return [lengths[i:i + rows] for i in range(0, len(lengths), rows)]


def packing(args):
    """The fourth table: padding to the context, packing and a plan per
    step, on documents of an instruction-tuning-like length distribution."""
    a = argparse.Namespace(**vars(args))
    a.max_length, a.median, a.plan_batch = (args.pack_context,
                                            args.pack_median,
                                            args.pack_batch)
    steps = draw_random_steps(a, args.seed)
    tokens = sum(map(sum, steps))
    packed = pack([n for step in steps for n in step], a.max_length,
                  args.pack_rows)
    shapes = [tuple(map(int, s.split("x")))
              for s in args.pack_shapes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        index = write_index(workdir, steps, "documents")
        exe = compile_program(a, workdir, a.max_length)
        rows.append((f"padded to the context ({a.max_length})",
                     len(steps) * a.plan_batch * a.max_length, len(steps),
                     train(a, workdir, exe, steps, "padded")))
        b = argparse.Namespace(**vars(a))
        b.batch = b.microbatches = args.pack_rows
        exe = compile_program(b, workdir, a.max_length)
        rows.append((f"packed, {args.pack_rows} rows of {a.max_length}",
                     len(packed) * args.pack_rows * a.max_length,
                     len(packed), train(b, workdir, exe, packed, "packed")))
        exe, slots, plans = compile_planned(a, workdir, shapes, index,
                                            "plans")
        rows.append((f"a plan per step ({len(plans)} plans)", slots,
                     len(steps), train(a, workdir, exe, steps, "plans",
                                       index)))
    print(f"{len(steps)} steps of {a.plan_batch} documents drawn "
          f"log-normally (median {a.median:g}, sigma 1, clipped to [1, "
          f"{a.max_length}]), {tokens} tokens; {args.ranks} stages; "
          f"token-weighted GPT (one-hot), d_model {args.dim}, "
          f"{args.layers} layers; plan shapes {args.pack_shapes}")
    print(f"{'run':<34} {'token slots':>11} {'steps':>5} {'seconds':>9} "
          f"{'tokens/s':>9}")
    for label, slots, count, seconds in rows:
        print(f"{label:<34} {slots:>11} {count:>5} {seconds:>9.3f} "
              f"{tokens / seconds:>9.0f}")
    cheaper = packing_is_cheaper(a.step_shapes,
                                 [n for step in steps for n in step],
                                 a.max_length, args.dim)
    print(f"by cost (packing_is_cheaper: FLOPs of the packed rows at the "
          f"full context against the plans' micro-batches), "
          f"{'packing' if cheaper else 'the plans'} should be faster")
    print(f"pp-compile --packing=auto: {a.packing_remark}")
    print(f"a plan per step: {rows[0][3] / rows[2][3]:.2f}x padding's "
          f"tokens/s, {rows[1][3] / rows[2][3]:.2f}x packing's. Packing "
          f"mixes documents in attention unless masked: its rows attend "
          f"across documents, at the full context's cost.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8,
                        help="samples per step")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--median", type=float, default=24.0)
    parser.add_argument("--min-bucket", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--variant-microbatches", type=int, default=7)
    parser.add_argument("--long", type=int, default=2,
                        help="long samples per step (and samples per "
                        "micro-batch) of the shape-variant run")
    parser.add_argument("--short-length", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs of each program; the fastest counts")
    parser.add_argument("--plan-batch", type=int, default=16,
                        help="samples per step of the per-step plans")
    parser.add_argument("--shapes", default="2x256,8x64,16x16",
                        help="ROWSxLENGTH shape variants of the per-step "
                        "plans, the first the longest")
    parser.add_argument("--tables", choices=["all", "plans", "packing"],
                        default="all",
                        help="every table, or only the per-step plans' or "
                        "the packing one")
    for name, kind, default, what in [
            ("context", int, 1024, "the context"),
            ("median", float, 200.0, "the median document length"),
            ("batch", int, 8, "documents per step"),
            ("rows", int, 4, "packed rows (of the context) per step"),
            ("shapes", str, "2x1024,4x512,8x256,16x64",
             "ROWSxLENGTH shape variants of the plans, the first the "
             "longest")]:
        parser.add_argument(f"--pack-{name}", type=kind, default=default,
                            help=f"the packing table's {what}")
    parser.add_argument("--model", choices=["gen", "torch"], default="gen",
                        help="the GPT: gen_gpt.py's token-weighted one "
                        "(one-hot data), or examples/torch-gpt's exported "
                        "from PyTorch (integer ids; the per-step plans' "
                        "table only)")
    parser.add_argument("--vocab", type=int, default=32768,
                        help="the PyTorch GPT's vocabulary")
    args = parser.parse_args()
    if args.tables == "packing":
        packing(args)
        return 0
    per_step_plans(args)
    print()
    if args.tables == "plans" or args.model == "torch":
        return 0
    steps = draw_steps(args)
    tokens = sum(map(sum, steps))
    with tempfile.TemporaryDirectory() as workdir:
        padded = train(args, workdir,
                       compile_program(args, workdir, args.max_length),
                       steps, "padded")
        by_bucket = {}
        for step in steps:
            by_bucket.setdefault(bucket_of(max(step), args), []).append(step)
        bucketed, rows = 0.0, []
        for seq, group in sorted(by_bucket.items()):
            seconds = train(args, workdir,
                            compile_program(args, workdir, seq), group,
                            f"bucket-{seq}")
            bucketed += seconds
            rows.append((seq, len(group), sum(map(sum, group)), seconds))
    slots = len(steps) * args.batch
    print(f"{len(steps)} steps of {args.batch} samples, {tokens} tokens "
          f"(median {args.median:g}, max {args.max_length}); "
          f"{args.ranks} stages, 1f1b, {args.microbatches} micro-batches; "
          f"GPT {args.layers} layers, d_model {args.dim}")
    print(f"{'bucket':>7} {'steps':>6} {'tokens':>7} {'seconds':>9}")
    for seq, count, group_tokens, seconds in rows:
        print(f"{seq:>7} {count:>6} {group_tokens:>7} {seconds:>9.3f}")
    print(f"{'run':<28} {'padded tokens':>13} {'seconds':>9} "
          f"{'tokens/s':>9}")
    padded_slots = slots * args.max_length
    bucket_slots = sum(count * args.batch * seq for seq, count, _, _ in rows)
    print(f"{'padded to the longest':<28} {padded_slots:>13} {padded:>9.3f} "
          f"{tokens / padded:>9.0f}")
    print(f"{'power-of-two buckets':<28} {bucket_slots:>13} "
          f"{bucketed:>9.3f} {tokens / bucketed:>9.0f}")
    print(f"speed-up {padded / bucketed:.2f}x")
    print()

    steps = draw_mixed_steps(args)
    tokens = sum(map(sum, steps))
    with tempfile.TemporaryDirectory() as workdir:
        padded = train(args, workdir, compile_variants(args, workdir, False),
                       steps, "padded")
        varied = train(args, workdir, compile_variants(args, workdir, True),
                       steps, "variants")
    m = args.variant_microbatches
    print(f"{len(steps)} steps of {args.long} samples of {args.short_length + 1}"
          f" to {args.max_length} tokens and {(m - 1) * args.long} of 1 to "
          f"{args.short_length}, {tokens} tokens; {args.ranks} stages, 1f1b, "
          f"{m} micro-batches of {args.long}")
    print(f"{'run':<36} {'padded tokens':>13} {'seconds':>9} "
          f"{'tokens/s':>9}")
    rows = m * args.long * args.max_length * len(steps)
    print(f"{'every micro-batch at the longest':<36} {rows:>13} "
          f"{padded:>9.3f} {tokens / padded:>9.0f}")
    rows = args.long * (args.max_length + (m - 1) * args.short_length)
    print(f"{'shape variants (1 long, rest short)':<36} "
          f"{rows * len(steps):>13} {varied:>9.3f} {tokens / varied:>9.0f}")
    print(f"speed-up {padded / varied:.2f}x")
    print()
    packing(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
