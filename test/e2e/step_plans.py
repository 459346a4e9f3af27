#!/usr/bin/env python3
"""A plan and a schedule per step: the token-weighted GPT compiled with
three shape variants (2 x 16, 4 x 8 and 8 x 4 tokens) and
`pp-compile --step-plans INDEX`, which cuts each step's samples into
micro-batches by the dynamic program and schedules each distinct plan with
`greedy`, must train exactly like one process of context 32 on the same
samples: per-step losses and final weights within --rtol, on 2 pipeline
ranks and on 2 ranks x 2 data-parallel replicas (each replica planned on
its own samples). The index's steps are cut differently, so that several
plans run. With 2 replicas, the same program also runs the index streamed
from a FIFO a slow writer feeds (--choose-plans --plan-lookahead 1),
against the same index read whole. A sample no variant holds is refused at compile time, and an
index the program was not planned for at run time, each in one line."""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from variable_length import GEN_GPT, MODEL, compare, run, train  # noqa: E402

INDEX = os.path.join(HERE, "Inputs", "sample-lengths-plans.txt")
SHAPES = [(16, 2), (8, 4), (4, 8)]  # (tokens, rows) of variants 0, 1, 2


def generate(workdir, seq, batch, extra=()):
    model = os.path.join(workdir, f"gpt-{seq}-{batch}.mlir")
    run([sys.executable, GEN_GPT] + MODEL +
        ["--seq", str(seq), "--batch", str(batch), "-o", model] + list(extra))
    return model


def compile_planned(args, workdir, index, replicas, expect_ok=True):
    models = [generate(workdir, seq, rows, ["--stage-ends", "0"])
              for seq, rows in SHAPES]
    exe = os.path.join(workdir, f"planned-{replicas}")
    return exe, run([args.pp_compile, models[0], "--stages", "2",
                     "--microbatches", "1", "--schedule", "greedy",
                     "--data-parallel", str(replicas), "--step-plans", index,
                     "--tensor-parallel", str(args.tensor_parallel),
                     "-O0"] + args.compile_arg
                    + ["--variant=" + m for m in models[1:]] + ["-o", exe],
                    expect_ok)


def check_plans(remark, replicas):
    """The plans of the steps: at least two different ones."""
    plans = re.findall(r"step (\d+)(?: replica \d+)?: plan (\d+)", remark)
    counted = re.search(r"(\d+) steps in (\d+) plans", remark)
    ok = counted is not None and int(counted.group(2)) >= 2 and \
        len(set(p for _, p in plans)) >= 2 and len(plans) == 3 * replicas
    print(f"{'PASS' if ok else 'FAIL'}: {replicas} replica(s): "
          f"{' '.join(remark.split())}")
    return ok


def refuses(name, expected, out):
    found = re.search(expected, out) is not None
    print(f"{'PASS' if found else 'FAIL'}: {name}"
          f"{'' if found else ': ' + out}")
    return found


def streamed(exe, ranks, workdir, steps):
    """`steps` of INDEX's lines (again and again) as one index, trained
    read whole and read from a FIFO that a slow writer feeds a line every
    0.2 s, both with --choose-plans (the second with --plan-lookahead 1):
    the losses and params of each."""
    with open(INDEX) as f:
        lines = [line.split("#")[0].strip() + "\n" for line in f
                 if line.split("#")[0].strip()]
    text = "".join(lines[i % len(lines)] for i in range(steps))
    whole = os.path.join(workdir, "whole.txt")
    with open(whole, "w") as f:
        f.write(text)
    choose = ["--choose-plans"]
    _, losses, params = train(exe, ranks, whole, steps, extra=choose)
    fifo = os.path.join(workdir, "stream")
    os.mkfifo(fifo)
    writer = subprocess.Popen(
        ["sh", "-c", 'printf %s "$1" | while IFS= read -r l; do sleep 0.2; '
         'echo "$l"; done > "$2"', "sh", text, fifo])
    try:
        _, stream_losses, stream_params = train(
            exe, ranks, fifo, steps, extra=choose + ["--plan-lookahead", "1"])
    finally:
        writer.kill()
        writer.wait()
    return stream_losses, stream_params, losses, params


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--replicas", default="1,2",
                        help="the data-parallel replicas to train with")
    parser.add_argument("--tensor-parallel", type=int, default=1,
                        help="processes per pipeline rank splitting its "
                        "weights")
    parser.add_argument("--compile-arg", action="append", default=[],
                        help="an option for the planned program's pp-compile "
                        "(repeatable), e.g. --compile-arg=--recompute=all")
    parser.add_argument("--oracle-only", action="store_true",
                        help="leave out the refusal checks")
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as workdir:
        reference = os.path.join(workdir, "reference")
        run([args.pp_compile, generate(workdir, 32, 8), "--stages", "1",
             "--microbatches", "1", "-O0", "-o", reference])
        _, ref_losses, ref_params = train(reference, 1, INDEX, args.steps)
        for replicas in map(int, args.replicas.split(",")):
            exe, remark = compile_planned(args, workdir, INDEX, replicas)
            failed += not check_plans(remark, replicas)
            _, losses, params = train(exe, 2 * replicas * args.tensor_parallel,
                                      INDEX, args.steps)
            failed += not compare(
                f"2 stages x {replicas} replica(s), a greedy schedule per "
                "step plan, against 1 process of context 32", losses, params,
                ref_losses, ref_params, args)
            if replicas > 1:
                failed += not compare(
                    f"2 stages x {replicas} replicas, plans chosen for an "
                    "index streamed from a FIFO, against the index read "
                    "whole", *streamed(exe, 2 * replicas *
                                       args.tensor_parallel, workdir,
                                       args.steps), args)
        if args.oracle_only:
            return 1 if failed else 0

        bad = os.path.join(workdir, "bad.txt")
        with open(bad, "w") as f:
            f.write("16 3 9 12 5 7 2 14\n4 4 17 16 1 8 3 6\n")
        _, out = compile_planned(args, workdir, bad, 1, expect_ok=False)
        expected = (r"pp-compile: '\S+': step 1: sample 2 has 17 "
                    r"tokens, more than the longest micro-batch shape holds "
                    r"\(16\)")
        failed += not refuses("pp-compile refuses a sample of 17 tokens",
                              expected, out)

        with open(bad, "w") as f:
            f.write("16 3 9 12 5 7 2 14\n4 4 2 16 1 8 3 6\n")
        out, _, _ = train(exe, 4, bad, 1, expect_ok=False)
        expected = (r"pprt: --sample-lengths \S+: 2 steps; the program was "
                    r"planned for 3 \(pp-compile --step-plans\): compile with "
                    r"this index")
        failed += not refuses("the program refuses an index it was not "
                              "planned for", expected, out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
