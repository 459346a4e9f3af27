#!/usr/bin/env python3
"""The oracle of pipedream-2bw: a pipeline with two weight versions per
stage must train like a one-process emulation of PipeDream-2BW's update,
W(t + 1) = W(t) - lr * grad(W(t - 1)) with W(-1) = W(0).

The emulation drives the synchronous 1-stage program one step at a time:
step t starts from the older version A = W(t - 1) (--init-weights, with
--first-step t for step t's data), its loss is step t's loss and its saved
weights A' = A - lr * grad(A) give the update, applied here to the newer
version B = W(t): the versions become (B, B + A' - A). The pipelined
program (4 ranks, 8 micro-batches) must match its losses and final weights
within fp32 tolerance (with --data-parallel D, D replicas of the pipeline
against the emulation playing them in turn), and must differ from
synchronous training, so that running synchronous SGD cannot pass.
--checkpoint, which would save one version only, is refused."""

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "runtime", "test"))
import safetensors_file  # noqa: E402
from weights import run  # noqa: E402


def compile_mlp(args, workdir, stages, microbatches, schedule, replicas=1,
                flags=()):
    exe = os.path.join(workdir, f"mlp_{schedule}_{stages}")
    run([args.pp_compile, args.model, "--stages", str(stages), "--ranks",
         str(stages), "--microbatches", str(microbatches), "--schedule",
         schedule, "--data-parallel", str(replicas), "-o", exe] + list(flags))
    return exe


def train(args, exe, ranks, *flags):
    """[losses] and {param index: (sum, sumsq)} of a run."""
    out = run(["mpirun", "-np", str(ranks), exe, "--lr", str(args.lr),
               "--timeout", "60", *flags])
    losses = [float(v) for v in re.findall(r"^step \d+ loss (\S+)$", out,
                                           re.M)]
    params = {int(i): (float(s), float(q)) for i, s, q in
              re.findall(r"^param (\d+) sum (\S+) sumsq (\S+)$", out, re.M)}
    return losses, params


def load(path):
    return {name: (shape, values) for name, (dtype, shape, values)
            in safetensors_file.read(path)[1].items() if dtype == "F32"}


def save(path, weights):
    safetensors_file.write(path, {
        name: ("F32", shape, safetensors_file.f32(values))
        for name, (shape, values) in weights.items()})


def emulate(args, ref, workdir):
    """Losses and final (newest) weights of the delayed update."""
    initial = os.path.join(workdir, "w0.safetensors")
    train(args, ref, 1, "--steps", "0", "--save", initial, *args.sequential)
    older = newer = load(initial)
    losses = []
    for step in range(1, args.steps + 1):
        start = os.path.join(workdir, f"older{step}.safetensors")
        after = os.path.join(workdir, f"after{step}.safetensors")
        save(start, older)
        loss, _ = train(args, ref, 1, "--steps", "1", "--init-weights", start,
                        "--first-step", str(step), "--save", after,
                        *args.sequential)
        losses += loss
        stepped = load(after)
        older, newer = newer, {
            name: (shape, [b + (a1 - a0) for b, a0, a1 in
                           zip(values, older[name][1], stepped[name][1])])
            for name, (shape, values) in newer.items()}
    return losses, newer


GRADIENT_LR = 1024.0


def gradient(args, ref, workdir, step, weights):
    """grad(weights) on step `step`'s data, and the loss there: one SGD step
    of the 1-stage program with lr 1024, a power of two, so that
    (W - W') / 1024 recovers the gradient to fp32 rounding of its own size
    rather than of the weights'."""
    start = os.path.join(workdir, f"grad_in{step}.safetensors")
    after = os.path.join(workdir, f"grad_out{step}.safetensors")
    save(start, weights)
    out = run(["mpirun", "-np", "1", ref, "--lr", str(GRADIENT_LR),
               "--timeout", "60", "--steps", "1", "--init-weights", start,
               "--first-step", str(step), "--save", after, *args.sequential])
    loss = [float(v) for v in re.findall(r"^step \d+ loss (\S+)$", out,
                                         re.M)]
    stepped = load(after)
    return loss, {name: [(w0 - w1) / GRADIENT_LR for w0, w1 in
                         zip(values, stepped[name][1])]
                  for name, (_, values) in weights.items()}


def emulate_adam(args, ref, workdir):
    """Losses and final (newest) weights of the delayed update with Adam:
    the moments take grad(W(t - 1)) and the bias-corrected step goes onto
    W(t), as pprt_set_weight_versions documents (t counts the updates;
    beta1, beta2 and eps are the runtime's defaults)."""
    initial = os.path.join(workdir, "w0.safetensors")
    train(args, ref, 1, "--steps", "0", "--save", initial, *args.sequential)
    older = newer = load(initial)
    m = {name: [0.0] * len(values) for name, (_, values) in older.items()}
    v = {name: [0.0] * len(values) for name, (_, values) in older.items()}
    b1, b2, eps = 0.9, 0.999, 1e-8
    losses = []
    for step in range(1, args.steps + 1):
        loss, grads = gradient(args, ref, workdir, step, older)
        losses += loss
        stepped = {}
        for name, (shape, values) in newer.items():
            g = grads[name]
            m[name] = [b1 * a + (1 - b1) * x for a, x in zip(m[name], g)]
            v[name] = [b2 * a + (1 - b2) * x * x for a, x in zip(v[name], g)]
            stepped[name] = (shape, [
                w - args.lr * (a / (1 - b1 ** step)) /
                (math.sqrt(b / (1 - b2 ** step)) + eps)
                for w, a, b in zip(values, m[name], v[name])])
        older, newer = newer, stepped
    return losses, newer


def close(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-12)


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--data-parallel", type=int, default=1,
                        help="replicas of the pipeline (ranks x D processes); "
                        "the emulation plays them in turn "
                        "(--sequential-replicas D)")
    parser.add_argument("--tensor-parallel", type=int, default=1,
                        help="processes per pipeline rank splitting its "
                        "weights (ranks x T x D processes)")
    parser.add_argument("--compile-arg", action="append", default=[],
                        help="an option for the pipelined program's "
                        "pp-compile (repeatable), e.g. --compile-arg="
                        "--recompute=all")
    parser.add_argument("--optimizer", choices=["sgd", "adam"],
                        default="sgd",
                        help="adam: against emulate_adam, and synchronous "
                        "Adam must differ")
    args = parser.parse_args()
    optimizer = ["--optimizer", args.optimizer]
    args.sequential = ["--sequential-replicas", str(args.data_parallel)]
    errors = []
    with tempfile.TemporaryDirectory() as workdir:
        ref = compile_mlp(args, workdir, 1, 1, "gpipe")
        pipe = compile_mlp(args, workdir, args.ranks, args.microbatches,
                           "pipedream-2bw", args.data_parallel,
                           ["--tensor-parallel", str(args.tensor_parallel)] +
                           args.compile_arg)
        processes = args.ranks * args.data_parallel * args.tensor_parallel
        expected, newest = (emulate_adam if args.optimizer == "adam" else
                            emulate)(args, ref, workdir)
        losses, params = train(args, pipe, processes, "--steps",
                               str(args.steps), "--print-params", *optimizer)
        sync, _ = train(args, ref, 1, "--steps", str(args.steps),
                        *args.sequential, *optimizer)
        # A checkpoint holds one version: refused at start-up, not lost.
        refused = subprocess.run(
            ["mpirun", "-np", str(processes), pipe, "--steps", "1",
             "--checkpoint", os.path.join(workdir, "checkpoint")],
            capture_output=True, text=True, timeout=300)
        if refused.returncode == 0 or "keeps two weight versions" not in (
                refused.stdout + refused.stderr):
            errors.append("--checkpoint was not refused: "
                          f"{refused.stdout}{refused.stderr}")
    worst = max(relative(a, b) for a, b in zip(losses, expected))
    if len(losses) != args.steps or worst > args.rtol:
        errors.append(f"losses {losses} differ from the emulation's "
                      f"{expected} (max relative difference {worst:.2e})")
    for name, (_, values) in newest.items():
        total, sumsq = params.get(int(name[len("param"):]), (None, None))
        want = (sum(values), sum(v * v for v in values))
        if total is None or not (close(total, want[0], args.rtol * 10) and
                                 close(sumsq, want[1], args.rtol * 10)):
            errors.append(f"{name}: final weights (sum {total}, sumsq "
                          f"{sumsq}) are not the emulation's newest version "
                          f"(sum {want[0]}, sumsq {want[1]})")
    # Step 1 reads W(0) in both; steps 2 and on read a version older than
    # synchronous training does.
    apart = max(relative(a, b) for a, b in zip(expected[1:], sync[1:]))
    if not close(expected[0], sync[0], args.rtol) or apart < 100 * args.rtol:
        errors.append(f"the emulation {expected} is too close to synchronous "
                      f"training {sync} (max relative difference from step 2 "
                      f"{apart:.2e}) to tell them apart")
    print(f"pipedream-2bw {args.ranks} ranks {args.microbatches} "
          f"micro-batches {args.data_parallel} replicas {args.optimizer}: "
          f"{losses}")
    print(f"emulation: {expected}; max relative difference {worst:.2e}")
    print(f"synchronous: {sync}; pipedream-2bw differs from it by up to "
          f"{apart:.2e} (relative) from step 2")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
