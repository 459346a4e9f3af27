#!/usr/bin/env python3
"""The correctness oracle: a pipelined model must train exactly like the
unpipelined one. Compiles the model with 1 stage and 1 micro-batch as the
reference, then with every requested schedule and micro-batch count, runs
each under mpirun and compares per-step losses and final weights.

With --data-parallel D the pipelines run as D replicas on ranks x D
processes, each replica on its own B rows of a D x B-row global batch, and
their summed gradients train every replica. The reference is the same
1-stage program on one process playing the D replicas in turn
(--sequential-replicas D): the same global batch, its gradients summed by
accumulation instead of an all-reduce, the loss the sum over replicas.

With --tensor-parallel T every pipeline rank is a group of T processes
that split its weights (docs/TensorParallel.md): ranks x T x D processes,
against the same unsplit reference; --print-params reports the gathered
global weights."""

import argparse
import os
import re
import subprocess
import sys
import tempfile


# Seconds one compile or training run may take (--run-timeout).
RUN_TIMEOUT = 300


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT)
    if proc.returncode != 0:
        sys.exit(f"FAILED ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def parse_schedule(spec, ranks):
    """'name[:variant[+variant]][@stages]': the schedule, whether to split
    backwards into B and W (`split`), whether every stage recomputes its
    forward in its backward (`recompute`), and the stage count (default:
    one stage per rank)."""
    spec, _, stages = spec.partition("@")
    name, _, variants = spec.partition(":")
    variants = set(variants.split("+")) - {""}
    unknown = variants - {"split", "recompute"}
    if unknown:
        sys.exit(f"unknown schedule variant {', '.join(sorted(unknown))} "
                 f"in '{spec}'; expected split or recompute")
    return (name, "split" in variants, "recompute" in variants,
            int(stages) if stages else ranks)


def train(args, workdir, stages, microbatches, schedule, ranks=None,
          split=False, replicas=1, sequential=1, recompute=False,
          tensor_parallel=1):
    """Trains `replicas` data-parallel copies of the pipeline, each process
    playing `sequential` replicas in turn, each rank a group of
    `tensor_parallel` processes."""
    ranks = ranks or stages
    exe = os.path.join(workdir, f"train_{stages}_{ranks}_{microbatches}_"
                       f"{schedule}_{int(split)}_{int(recompute)}_{replicas}_"
                       f"{tensor_parallel}_{args.label}")
    run([args.pp_compile, args.model, "--stages", str(stages), "--ranks",
         str(ranks), "--microbatches", str(microbatches), "--schedule",
         schedule, "--data-parallel", str(replicas), "--tensor-parallel",
         str(tensor_parallel), "-o", exe] +
        (["--split-backward"] if split else []) +
        (["--recompute=all"] if recompute else []) + args.compile_arg)
    data = ["--corpus", args.corpus] if args.corpus else []
    out = run(["mpirun", "-np", str(ranks * tensor_parallel * replicas), exe,
               "--steps",
               str(args.steps), "--optimizer", args.optimizer, "--lr",
               str(args.lr), "--sequential-replicas", str(sequential),
               "--print-params", "--timeout", "60"] + data + args.run_arg)
    losses = [float(m) for m in re.findall(r"^step \d+ loss (\S+)$", out, re.M)]
    params = re.findall(r"^param (\d+) sum (\S+) sumsq (\S+)$", out, re.M)
    if len(losses) != args.steps or not params:
        sys.exit(f"unexpected output of {exe}:\n{out}")
    return losses, {int(i): (float(s), float(q)) for i, s, q in params}


def microbatch_counts(schedule, requested, ranks):
    """The micro-batch counts to run `schedule` with: DualPipeV needs
    m >= 2p, so it runs 2p and 4p instead of the requested counts."""
    if schedule == "dualpipev":
        return [2 * ranks, 4 * ranks]
    return requested


def close(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-12)


def main():
    global RUN_TIMEOUT
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--microbatches", default="1,4,8")
    parser.add_argument(
        "--schedules",
        default="gpipe,1f1b,1f1b:split+recompute,zb-h1,zb-h2,auto,"
        "interleaved-1f1b@8,"
        "looped-bfs@8,zbv@8,dualpipev@8,hanayo@8,interleaved-zb@8,"
        "v-half@8,v-min@8,greedy")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"])
    parser.add_argument("--data-parallel", type=int, default=1,
                        help="replicas of each pipeline (ranks x D processes)")
    parser.add_argument("--tensor-parallel", type=int, default=1,
                        help="processes per pipeline rank splitting its "
                        "weights (ranks x T x D processes)")
    parser.add_argument("--corpus",
                        help="train on this text (the program's --corpus) "
                        "instead of synthetic data")
    parser.add_argument("--reference-model",
                        help="the unpipelined reference (default: --model), "
                        "e.g. the model without its stage markers")
    parser.add_argument("--run-timeout", type=int, default=RUN_TIMEOUT,
                        help="seconds one compile or training run may take")
    parser.add_argument("--compile-arg", action="append", default=[],
                        help="an option for pp-compile (repeatable), e.g. "
                        "--compile-arg=--gemm=library")
    parser.add_argument("--run-arg", action="append", default=[],
                        help="an option for the pipelined programs' runs, not "
                        "the reference's (repeatable), e.g. "
                        "--run-arg=--threads=2")
    parser.add_argument("--reference-compile-arg", action="append",
                        default=None,
                        help="an option for the reference's pp-compile "
                        "(repeatable; default: the --compile-arg options)")
    args = parser.parse_args()
    args.label = "test"
    RUN_TIMEOUT = args.run_timeout
    reference = argparse.Namespace(
        **{**vars(args), "model": args.reference_model or args.model,
           "label": "reference", "run_arg": [],
           "compile_arg": (args.compile_arg
                           if args.reference_compile_arg is None
                           else args.reference_compile_arg)})

    failed = passed = 0
    with tempfile.TemporaryDirectory() as workdir:
        ref_losses, ref_params = train(reference, workdir, 1, 1, "gpipe",
                                       sequential=args.data_parallel)
        head, tail = ref_losses[:5], ref_losses[-5:]
        if not sum(tail) < sum(head):
            print(f"FAIL: the reference loss does not fall: {ref_losses}")
            failed += 1
        for spec in args.schedules.split(","):
            schedule, split, recompute, stages = parse_schedule(spec,
                                                                args.ranks)
            requested = list(map(int, args.microbatches.split(",")))
            for mb in microbatch_counts(schedule, requested, args.ranks):
                # Megatron's interleaving needs whole groups of p micro-batches.
                if schedule == "interleaved-1f1b" and mb % args.ranks:
                    continue
                losses, params = train(args, workdir, stages, mb, schedule,
                                       args.ranks, split, args.data_parallel,
                                       recompute=recompute,
                                       tensor_parallel=args.tensor_parallel)
                worst = max(abs(a - b) / max(abs(b), 1e-12)
                            for a, b in zip(losses, ref_losses))
                ok = all(close(a, b, args.rtol) for a, b in zip(losses, ref_losses))
                ok = ok and params.keys() == ref_params.keys() and all(
                    close(params[i][k], ref_params[i][k], args.rtol * 10)
                    for i in params for k in (0, 1))
                name = (f"{spec} stages={stages} ranks={args.ranks} "
                        f"replicas={args.data_parallel} "
                        f"tensor-parallel={args.tensor_parallel} "
                        f"microbatches={mb} "
                        f"optimizer={args.optimizer}")
                print(f"{'PASS' if ok else 'FAIL'}: {name}: max relative loss "
                      f"difference {worst:.2e} over {args.steps} steps")
                passed, failed = passed + ok, failed + (not ok)
    print(f"reference losses: first {ref_losses[0]:.6f} last {ref_losses[-1]:.6f}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
