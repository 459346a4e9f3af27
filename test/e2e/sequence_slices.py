#!/usr/bin/env python3
"""A training step computed in k sequence slices (pp-split-sequence) trains
like the unsliced one: the sliced model, pipelined, against the unsliced
model on one process, on the same corpus batches. Per-step losses within
--rtol relative, and every final weight within --rtol of its tensor's
largest magnitude (the saved weights, element by element). With --slices,
pp-compile slices the model itself and runs each slice as its own action
(--schedule seq1f1b); --print-memory's peak activation bytes per rank are
then printed too."""

import argparse
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "runtime", "test"))
import safetensors_file  # noqa: E402
from weights import run  # noqa: E402


def train(args, workdir, model, name, stages, microbatches, schedule,
          slices=1):
    """Per-step losses and the final weights {name: values}."""
    exe = os.path.join(workdir, name)
    flags = ["--slices", str(slices)] if slices > 1 else []
    if args.split_backward and stages > 1:
        flags.append("--split-backward")
    if stages > 1:
        flags += args.compile_arg
    run([args.pp_compile, model, "--stages", str(stages), "--microbatches",
         str(microbatches), "--schedule", schedule, "-o", exe] + flags)
    weights = os.path.join(workdir, name + ".safetensors")
    out = run(["mpiexec", "-n", str(stages), exe, "--steps", str(args.steps),
               "--lr", str(args.lr), "--corpus", args.corpus, "--timeout",
               "120", "--save", weights, "--print-memory"])
    for rank, peak in re.findall(
            r"^activation memory rank (\d+): peak (\d+) bytes$", out, re.M):
        print(f"{name}: rank {rank} peak activation {peak} bytes")
    losses = [float(v) for v in re.findall(r"^step \d+ loss (\S+)$", out,
                                           re.M)]
    if len(losses) != args.steps:
        sys.exit(f"FAILED: {name} printed {len(losses)} losses:\n{out}")
    _, tensors = safetensors_file.read(weights)
    return losses, {n: values for n, (_, _, values) in tensors.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True, help="the sliced model")
    parser.add_argument("--reference-model", required=True,
                        help="the same model unsliced")
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--microbatches", type=int, default=2)
    parser.add_argument("--schedule", default="1f1b")
    parser.add_argument("--slices", type=int, default=1,
                        help="pp-compile --slices: the model is unsliced")
    parser.add_argument("--split-backward", action="store_true",
                        help="the pipelined program runs B and W apart")
    parser.add_argument("--compile-arg", action="append", default=[],
                        help="an option for the pipelined program's "
                        "pp-compile (repeatable), e.g. --compile-arg="
                        "--recompute=all")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.3)
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        ref_losses, ref_weights = train(args, workdir, args.reference_model,
                                        "reference", 1, 1, "gpipe")
        losses, weights = train(args, workdir, args.model, "sliced",
                                args.ranks, args.microbatches, args.schedule,
                                args.slices)
    if not sum(ref_losses[-3:]) < sum(ref_losses[:3]):
        sys.exit(f"FAIL: the reference loss does not fall: {ref_losses}")
    loss_diff = max(abs(a - b) / abs(b) for a, b in zip(losses, ref_losses))
    if weights.keys() != ref_weights.keys():
        sys.exit(f"FAIL: weights {sorted(weights)} against "
                 f"{sorted(ref_weights)}")
    weight_diff, worst = 0.0, None
    for name, ref in ref_weights.items():
        scale = max(abs(v) for v in ref) or 1.0
        diff = max(abs(a - b) for a, b in zip(weights[name], ref)) / scale
        if diff >= weight_diff:
            weight_diff, worst = diff, name
    ok = loss_diff <= args.rtol and weight_diff <= args.rtol
    print(f"{'PASS' if ok else 'FAIL'}: {os.path.basename(args.model)} on "
          f"{args.ranks} ranks, {args.schedule}, {args.slices} slices, "
          f"{args.microbatches} "
          f"micro-batches, {args.steps} steps: max relative loss difference "
          f"{loss_diff:.2e}, weights {weight_diff:.2e} ({worst})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
